"""Small valid records in each reader's real format: the seeds the reader fuzz mutates and the registry test
reads (a helper module, not a test module)."""

from __future__ import annotations

VSR = [{"image": "000000085637.jpg", "caption": "The cat is left of the dog.", "label": 1, "relation": "left of",
        "annotator_id": 7, "vote_true_validator_id": "[2, 9]"},
       {"image": "000000085638.jpg", "caption": "The cup is on top of the table.", "label": 0,
        "relation": "on top of", "subj": "cup", "obj": "table"}]
TWO_OBJ = [[453302, "A photo of a toaster to the left of a sink", "A photo of a toaster to the right of a sink"],
           [181303, "A photo of a kite above a person", "A photo of a kite below a person"]]
CONTROLLED = [{"image_path": "data/controlled_images/mug_on_table.jpeg",
               "caption_options": ["A mug on a table", "A mug under a table", "A mug to the left of a table"]}]
SUGARCREPE = {"0": {"filename": "000000565045.jpg", "caption": "A cat on a mat.", "negative_caption": "A dog on a mat."},
              "1": {"filename": "000000565046.jpg", "caption": "A red car.", "negative_caption": "A blue car."}}
GQA = {"2354786": {"width": 500, "height": 333, "objects": {
    "1": {"name": "cat", "x": 10, "y": 20, "w": 50, "h": 40, "attributes": ["black"],
          "relations": [{"name": "to the left of", "object": "2"}]},
    "2": {"name": "dog", "x": 200, "y": 30, "w": 60, "h": 50, "attributes": [], "relations": {}}}}}
INSTANCES = {"images": [{"id": 1, "width": 100, "height": 80, "file_name": "a.jpg"},
                        {"id": 2, "width": 64, "height": 64, "file_name": "b.jpg"}],
             "annotations": [{"id": 5, "image_id": 1, "category_id": 18, "bbox": [10, 10, 5, 20], "iscrowd": 0},
                             {"id": 6, "image_id": 2, "category_id": 3, "bbox": [0, 0, 64, 64]}],
             "categories": [{"id": 18, "name": "dog"}, {"id": 3, "name": "car"}]}
CAPTIONS = {"annotations": [{"id": 11, "image_id": 1, "caption": "a dog"}, {"id": 12, "image_id": 2, "caption": "a car"}]}
PAIRS = [{"image_id": "k1", "width": 100, "height": 80, "caption": "a dog left of a chair", "caption_id": "c1",
          "objects": [{"name": "dog", "box": [1, 1, 10, 10]}, {"name": "chair", "box": [50, 5, 20, 20]}],
          "mentions": ["dog"], "triples": [{"subject": "dog", "relation": "left of", "object": "chair"}]},
         {"image_id": 7, "caption": "a cat", "objects": [{"name": "cat", "iscrowd": True}]}]
ITEMS = [{"item_id": "a", "image": "a.png", "question": "Is the cat left of the dog?", "label": "yes",
          "group_id": "g", "statement": "true", "boxes": {"subject": [1, 2, 3, 4], "object": [5, 6, 7, 8]}},
         {"item_id": 2, "image": None, "question": "Is the cat right of the dog?", "label": 0, "group_id": "g",
          "statement": "false"}]
CYCLES = [{"cycle_id": "c1", "family": "f", "image_1": "u1", "caption_1": "v1", "image_2": "u2", "caption_2": "v2",
           "split": "test"},
          {"cycle_id": 2, "family": "f", "image_1": 3, "caption_1": "v3", "image_2": "u4", "caption_2": "v4"}]
SCORES = [{"image_id": u, "caption_id": v, "score": 0.5 if u[1] == v[1] else 0.25}
          for u in ("u1", "u2") for v in ("v1", "v2")]
MARGINS = [{"model": "m", "dataset": "d", "item_id": i, "context": c, "margin": 0.5 - k, "label": "yes",
            "group_id": "g", "statement": "true" if i == "a" else "false"}
           for k, i in enumerate(("a", "b")) for c in ("original", "text", "blank")]
PAIR_TABLE = [{"image_id": 1, "caption": "a dog", "label": 1}, {"image_id": 2, "caption_id": "c2", "label": "false"}]
POPE = [{"question_id": 1, "image": "a.jpg", "text": "Is there a cat in the image?", "label": "yes",
         "category": "random"},
        {"id": "2", "question_id": "2", "question": "Is there a dog?", "answer": "no", "image": "b.jpg",
         "image_source": "COCO", "category": "adversarial"}]
MME = [{"question_id": "existence/1.jpg", "image": "1.jpg", "question": "Is there a train?", "answer": "Yes",
        "category": "existence"},
       {"question_id": "existence/1.jpg", "image": "1.jpg", "question": "Is there a bed?", "answer": "No",
        "category": "existence"}]
HALLUSION = [{"category": "VD", "subcategory": "ocr", "visual_input": "1", "set_id": "0", "figure_id": "0",
              "question_id": "0", "question": "Is it red?", "gt_answer": "1", "filename": "./VD/ocr/0_0.png"},
             {"category": "VS", "subcategory": "chart", "visual_input": "0", "set_id": 1, "figure_id": 0,
              "question_id": 0, "question": "Was it 2020?", "gt_answer": "0", "filename": None}]
MMSTAR = [{"index": 0, "question": "Which?\nOptions: A: a cat, B: a dog, C: a cow", "image": "0.jpg", "answer": "B",
           "category": "coarse perception", "l2_category": "image style"}]
MMBENCH = [{"index": 241, "question": "What colour?", "hint": None, "A": "red", "B": "green", "C": "nan",
            "answer": "B", "category": "attribute", "L2-category": "fine", "image": "241.png"}]
SEED = {"questions": [{"answer": "A", "choice_a": "1", "choice_b": "2", "choice_c": "3", "choice_d": "4",
                       "data_id": "a.jpg", "data_type": "image", "question": "How many?", "question_id": "7",
                       "question_type_id": 5},
                      {"answer": "B", "choice_a": "run", "choice_b": "walk", "choice_c": "sit", "choice_d": "lie",
                       "data_id": "v.mp4", "data_type": "video", "question": "Doing?", "question_id": "8",
                       "question_type_id": 10}]}
SCIENCEQA = {"1": {"question": "Which is north?", "choices": ["a", "b", "c"], "answer": 2, "hint": "",
                   "image": "image.png", "split": "test", "subject": "social science", "topic": "geography"},
             "2": {"question": "Which word?", "choices": ["x", "y"], "answer": 0, "image": None, "split": "test"}}
MMMU = [{"id": "validation_Art_1", "question": "<image 1> which?", "options": "['a', 'b', 'c']", "answer": "C",
         "question_type": "multiple-choice", "image_1": "1.png", "image_2": "2.png", "subfield": "History"},
        {"id": "validation_Art_2", "question": "Year?", "options": "[]", "answer": "1888", "question_type": "open",
         "image_1": "3.png"}]
CV_BENCH = [{"idx": 0, "type": "2D", "task": "Count", "question": "How many?", "choices": ["3", "2"],
             "answer": "(B)", "filename": "img/a.png", "source": "ADE20K"}]
AI2D = [{"question": "Which?", "options": ["c", "D", "b"], "answer": "1", "image": "a.png"}]
META = ["Adjacency: adjacent to, alongside", "Directional: away from, towards", "", "Unallocated: among"]
