"""Registry entries of the one-image, candidate-caption suites: ARO, VALSE, SugarCrepe++, BLA, SVO-Probes."""

from __future__ import annotations

from vlaudit.analysis.suites.suite import Suite
from vlaudit.metrics.suites import aro as aro_metric
from vlaudit.metrics.suites import bla as bla_metric
from vlaudit.metrics.suites import sugarcrepe as sugarcrepe_metric
from vlaudit.metrics.suites import svo_probes as svo_metric
from vlaudit.metrics.suites import valse as valse_metric
from vlaudit.sources.suites import aro, bla, sugarcrepe, svo_probes, valse
from vlaudit.sources.suites.caption_rows import IMAGES_OPTION

_ARO_VG = ("a JSON list of {image_path, bbox_x/y/w/h, true_caption, false_caption, %s} "
           "(visual_genome_%s.json), or the Hub rows {image, true_caption, false_caption, %s, bbox}")
_ARO_ORDER = ("the Karpathy test JSON, rebuilt as the loader builds it (seeded; spaCy en_core_web_sm + NLTK), or "
              'materialised: a JSON list of the loader\'s test cases {"image", "caption_options": [true, 4 '
              'perturbed]}, or the Hub rows {images, correct_caption, hard_text_1..4} (gowitheflow/ARO-%s)')
_ORDER_OPTIONS = (IMAGES_OPTION, ("seed", "the seed of a rebuild from the Karpathy JSON (main_aro.py's default: 1)"))

ENTRIES: tuple[Suite, ...] = (
    Suite("aro-vg-relation", "ARO VG-Relation", _ARO_VG % ("relation_name", "relation", "relation_name"),
          aro.read_aro_vg_relation, aro_metric.vg_outcomes, aro_metric.vg_relation_aggregate,
          "macro accuracy over relations (argmax over [false, true] == true), the notebook's symmetric "
          "relations dropped", aro_metric.VG_TIE, f"{aro_metric.SOURCE}; {aro_metric.NOTEBOOK}",
          options=(IMAGES_OPTION,)),
    Suite("aro-vg-attribution", "ARO VG-Attribution", _ARO_VG % ("attributes", "attribution", "attributes"),
          aro.read_aro_vg_attribution, aro_metric.vg_outcomes, aro_metric.vg_attribution_aggregate,
          "macro accuracy over attribute pairs with >= 25 items (argmax over [false, true] == true)",
          aro_metric.VG_TIE, f"{aro_metric.SOURCE}; {aro_metric.NOTEBOOK}", options=(IMAGES_OPTION,)),
    Suite("aro-coco-order", "ARO COCO-Order", _ARO_ORDER % "COCO-order", aro.read_aro_coco_order,
          aro_metric.order_outcomes, aro_metric.order_aggregate,
          "Precision@1: argmax over [true, 4 perturbed] == 0, mean over items", aro_metric.ORDER_TIE,
          aro_metric.SOURCE, options=_ORDER_OPTIONS),
    Suite("aro-flickr-order", "ARO Flickr30k-Order", _ARO_ORDER % "Flickr-Order", aro.read_aro_flickr_order,
          aro_metric.order_outcomes, aro_metric.order_aggregate,
          "Precision@1: argmax over [true, 4 perturbed] == 0, mean over items", aro_metric.ORDER_TIE,
          aro_metric.SOURCE, options=_ORDER_OPTIONS),
    Suite("valse", "VALSE", "a JSON object {sample_id: {image_file, caption, foil, mturk: {caption, foil, "
          "other}, ...}} per piece (data/*.json), or a folder of the pieces; kept: mturk.caption >= 2",
          valse.read_valse, valse_metric.outcomes, valse_metric.aggregate,
          "acc_r per piece: s(caption) > s(foil) (also p_c, p_f, acc where the score is a match margin)",
          valse_metric.TIE, valse_metric.SOURCE,
          options=(("piece", "the subset name of a single file (default: the file's stem)"),
                   ("piece_folders", "name images <piece>/<image_file> (one images subfolder per piece)"))),
    Suite("sugarcrepe", "SugarCrepe", 'a JSON object {"0": {filename, caption, negative_caption}, ...} per file '
          "(data/{add,replace,swap}_*.json), a folder of them, or Hub rows of the same columns",
          sugarcrepe.read_sugarcrepe_suite, sugarcrepe_metric.sugarcrepe_outcomes,
          sugarcrepe_metric.sugarcrepe_aggregate, "accuracy per file: s(caption) > s(negative_caption)",
          sugarcrepe_metric.SC_TIE, sugarcrepe_metric.SC_SOURCE, options=(IMAGES_OPTION,)),
    Suite("sugarcrepe-pp", "SugarCrepe++", "a JSON list of {id, filename, caption, caption2, negative_caption} "
          "per file (data/*.json), a folder of them, or Hub rows of the same columns",
          sugarcrepe.read_sugarcrepe_pp, sugarcrepe_metric.pp_outcomes, sugarcrepe_metric.pp_aggregate,
          "ITT (both captions above the negative for the image) and TOT (text-only: caption-caption similarity "
          "above both caption-negative similarities), per file", sugarcrepe_metric.PP_TIE,
          sugarcrepe_metric.PP_SOURCE, text_similarity=True, options=(IMAGES_OPTION,)),
    Suite("svo-probes", "SVO-Probes", "svo_probes.csv: sentence, pos_triplet, neg_triplet, subj_neg, verb_neg, "
          "obj_neg, pos_image_id, neg_image_id (images <id>.jpg); rows with exactly one *_neg flag",
          svo_probes.read_svo_probes, svo_metric.outcomes, svo_metric.aggregate,
          "(pos_acc + neg_acc) / 2 over distinct (sentence, image) pairs, match iff s > 0, All and per "
          "subject/verb/object; and the pairwise accuracy s(pos) > s(neg)", svo_metric.DECISION,
          svo_metric.SOURCE, directions="t2i",
          options=(("image_suffix", "the suffix of the image files named by id (default .jpg)"),)),
    Suite("bla", "BLA", 'the layout the evaluation code reads: a JSON list of {"image_id", "caption_group": '
          '[{"True1", "True2", "False1", "False2"}]} per task (images <image_id>.jpg), or {image_id: [4 captions]}',
          bla.read_bla, bla_metric.outcomes, bla_metric.aggregate,
          "rank accuracy: the share of the four captions ranked in their correct half, mean over items",
          bla_metric.TIE, bla_metric.SOURCE,
          options=(("task", "the subset name (default: from the file name, e.g. active_passive)"),)),
)
