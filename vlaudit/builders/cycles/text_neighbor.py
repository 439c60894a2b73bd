"""The text-neighbor object family (``coco-object-text-neighbor``; cycle paper §5.4, Table 3).

The paper names a "text-neighbor" split without defining it. Operationalised here as **object cycles whose two
captions are mutual nearest neighbours under a fixed, model-free text similarity**, so that the swap changes
little text and a probe cannot succeed on gross caption differences:

* candidates: the same human captions as ``coco-object-coarse`` (every mentioned category annotated in the
  caption's own image), per split;
* similarity: cosine of TF-IDF vectors of the lower-cased word tokens (``\\b\\w+\\b``), smooth IDF, l2 rows —
  scikit-learn's ``TfidfVectorizer`` fitted on the candidates of the split (a deterministic function of the
  text; no model);
* neighbour of caption i: the candidate j of a *different image* with the highest cosine, ties broken by a
  seeded random priority; a caption with no shared token (cosine 0) has no neighbour;
* a block is (i, j) with nn(i) = j and nn(j) = i (mutual), accepted when both swaps are invalid under the
  object predicate (a mentioned category is absent from the other image). A mutual pair that fails the check is
  dropped, not re-paired with a further neighbour. Each image is used at most once per family and split
  (pairs taken in a seeded random order), as in every other family.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

TEXT_NEIGHBOR_FAMILY = "coco-object-text-neighbor"
TOKEN_PATTERN = r"(?u)\b\w+\b"
_CELLS = 8_000_000  # similarity entries held densely at a time (~64 MB float64): bounds memory at COCO scale


def nearest_neighbors(texts: Sequence[str], image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Index of each caption's TF-IDF cosine nearest neighbour among captions of other images (−1: none)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # heavy; only this family needs it

    n = len(texts)
    if n < 2:
        return np.full(n, -1, dtype=np.int64)
    vectors = TfidfVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN, norm="l2").fit_transform(list(texts))
    priority = rng.permutation(n).astype(np.float64)
    out = np.full(n, -1, dtype=np.int64)
    transposed = vectors.T.tocsc()
    chunk = max(16, _CELLS // n)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        sim = np.asarray((vectors[start:stop] @ transposed).todense(), dtype=np.float64)
        sim[image[start:stop, None] == image[None, :]] = -np.inf  # same image (and itself): never a neighbour
        best = sim.max(axis=1)
        # exact ties (common among short captions) go to the candidate with the lowest seeded priority
        tied = np.where(sim >= best[:, None] - 1e-12, priority[None, :], np.inf)
        choice = tied.argmin(axis=1)
        out[start:stop] = np.where(best > 0, choice, -1)
    return out


def mutual_neighbor_pairs(texts: Sequence[str], image: np.ndarray, check: Callable[[np.ndarray, np.ndarray], np.ndarray],
                          rng: np.random.Generator, max_pairs: int | None = None) -> list[tuple[int, int]]:
    """Accepted (i, j) candidate pairs: mutual nearest neighbours passing ``check``, one use per image."""
    image = np.asarray(image, dtype=np.int64)
    nn = nearest_neighbors(texts, image, rng)
    i = np.nonzero(nn >= 0)[0]
    i = i[(i < nn[i]) & (nn[nn[i]] == i)]
    j = nn[i]
    if len(i) == 0:
        return []
    ok = np.asarray(check(i, j), dtype=bool)
    i, j = i[ok], j[ok]
    used: set[int] = set()
    accepted: list[tuple[int, int]] = []
    for k in rng.permutation(len(i)).tolist():
        a, b = int(i[k]), int(j[k])
        if image[a] in used or image[b] in used:
            continue
        used.update((int(image[a]), int(image[b])))
        accepted.append((a, b))
        if max_pairs is not None and len(accepted) >= max_pairs:
            break
    return accepted
