"""How close is ``vlaudit features`` to the forward-pass limit of a dual encoder?

For the same cycles, images and model this times

(a) ``write_features`` end to end (file hashing, JPEG decoding, the model's preprocessing, tokenization,
    batching, Parquet and manifest writes), and
(b) the *floor*: bare batched ``encode_image`` / ``encode_text`` forwards over exactly the distinct images and
    captions it must embed, in the same batches, with every image decoded and preprocessed and every caption
    tokenized before the clock starts.

The representative model is an open_clip ViT built from config (224 px, patch 16 → 196 patch tokens, 4 × 256
vision layers, 4 × 256 text layers, CLIP's real BPE, 77-token context), saved as a local-dir model and loaded
through ``open_clip:local-dir:DIR`` as a user's checkpoint would be; the images are 480×360 JPEGs.

Last line: ``efficiency=<floor/actual> overhead_s=<actual−floor> max_abs_diff=<max |embedding diff|>``.
Run: ``.venv/bin/python benchmarks/features_limit.py [--images 96]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

WORDS = ["dog", "cat", "chair", "table", "car", "bus", "person", "umbrella", "bench", "bird"]
RELATIONS = ["to the left of", "to the right of", "above", "below", "next to"]


def build_representative_open_clip(out: Path, seed: int = 0) -> Path:
    import open_clip
    import torch
    from safetensors.torch import save_file

    from vlaudit.backends.tiny.real_tokenizers import clip_vocab_merges

    torch.manual_seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    model_cfg = {"embed_dim": 256,
                 "vision_cfg": {"image_size": 224, "layers": 4, "width": 256, "head_width": 64, "patch_size": 16},
                 "text_cfg": {"context_length": 77, "vocab_size": len(clip_vocab_merges()[0]), "width": 256,
                              "heads": 4, "layers": 4}}
    model = open_clip.CLIP(embed_dim=256, vision_cfg=open_clip.model.CLIPVisionCfg(**model_cfg["vision_cfg"]),
                           text_cfg=open_clip.model.CLIPTextCfg(**model_cfg["text_cfg"])).eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / "open_clip_model.safetensors"))
    preprocess = {"size": 224, "mean": [0.48145466, 0.4578275, 0.40821073],
                  "std": [0.26862954, 0.26130258, 0.27577711], "interpolation": "bicubic", "resize_mode": "shortest"}
    (out / "open_clip_config.json").write_text(json.dumps({"model_cfg": model_cfg, "preprocess_cfg": preprocess}))
    return out


def make_cycles(root: Path, n_images: int, seed: int) -> tuple[Path, Path]:
    """JPEG images and a cycles table whose blocks pair consecutive images (two captions per image)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = root / "images"
    images.mkdir(parents=True)
    for index in range(n_images):
        small = rng.integers(0, 256, size=(45, 60, 3), dtype=np.uint8)
        Image.fromarray(small).resize((480, 360), Image.BILINEAR).save(images / f"{index:06d}.jpg", quality=90)
    rows = []
    for index in range(0, n_images - 1, 2):
        texts = [f"a {rng.choice(WORDS)} {rng.choice(RELATIONS)} a {rng.choice(WORDS)}" for _ in range(2)]
        rows.append({"cycle_id": f"c{index}", "family": "bench", "split": "test", "image_1": f"{index:06d}",
                     "caption_1": f"t{index}", "image_2": f"{index + 1:06d}", "caption_2": f"t{index + 1}",
                     "text_1": texts[0], "text_2": texts[1]})
    path = root / "cycles.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, images


def floor_embeddings(backend, inputs, batch: int) -> tuple[float, dict[str, object]]:
    """Bare batched forwards over the same distinct inputs, in the same chunks; inputs prepared untimed."""
    import torch
    from PIL import Image

    model = backend.model
    image_ids, caption_ids = list(inputs.images), list(inputs.texts)
    pixels = [backend.preprocess(Image.open(inputs.images[i]).convert("RGB")) for i in image_ids]
    image_batches = [torch.stack(pixels[s:s + batch]) for s in range(0, len(pixels), batch)]
    tokens = backend.tokenizer([inputs.texts[c] for c in caption_ids])
    text_batches = [tokens[s:s + batch] for s in range(0, len(tokens), batch)]
    out: dict[str, object] = {}
    start = time.perf_counter()
    with torch.inference_mode():
        image_rows = [torch.nn.functional.normalize(model.encode_image(b), dim=-1) for b in image_batches]
        text_rows = [torch.nn.functional.normalize(model.encode_text(b), dim=-1) for b in text_batches]
    seconds = time.perf_counter() - start
    out.update(zip(image_ids, torch.cat(image_rows).float().numpy(), strict=True))
    out.update(zip(caption_ids, torch.cat(text_rows).float().numpy(), strict=True))
    return seconds, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import numpy as np
    import torch

    from vlaudit.backends.options import DualOptions, RunOptions
    from vlaudit.backends.registry import ModelRef, load_backend
    from vlaudit.scoring.features import collect_inputs, read_features, write_features
    from vlaudit.sources.cycle_tables import read_cycles

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = build_representative_open_clip(root / "model")
        cycles_path, images = make_cycles(root / "data", args.images, seed=0)
        backend = load_backend(ModelRef(f"open_clip:local-dir:{model_dir}", DualOptions(dtype="float32")),
                               RunOptions(device="cpu", batch_size=args.batch_size))
        inputs = collect_inputs(read_cycles(cycles_path), cycles_path, images)
        floor_embeddings(backend, type(inputs)(dict(list(inputs.images.items())[:2]),
                                               dict(list(inputs.texts.items())[:2])), 2)  # warm-up
        t_floor, floor = floor_embeddings(backend, inputs, args.batch_size)
        start = time.perf_counter()
        write_features(backend, inputs, root / "feats")
        t_run = time.perf_counter() - start
        feats = read_features(root / "feats")
        diffs = [np.abs(feats.images[i] - floor[k]).max() for k, i in feats.image_index().items()]
        diffs += [np.abs(feats.texts[i] - floor[k]).max() for k, i in feats.caption_index().items()]
    print(f"images={len(inputs.images)} captions={len(inputs.texts)} batch={args.batch_size} threads={args.threads}")
    print(f"floor={t_floor:.2f}s features={t_run:.2f}s")
    print(f"efficiency={t_floor / t_run:.3f} overhead_s={t_run - t_floor:.2f} max_abs_diff={max(diffs):.3g}")


if __name__ == "__main__":
    main()
