"""Box geometry shared by the builders and the image contexts.

Boxes are COCO ``[x, y, w, h]`` in pixels, y growing downwards; cx = x + w/2, cy = y + h/2 is the centre.

* :func:`box_centre` — (cx, cy).
* :func:`centre_relation_holds` — the centre rule of the spatial relations:
  left of(a, b) iff cx(a) + m_x < cx(b); right of(a, b) = left of(b, a);
  above(a, b) iff cy(a) + m_y < cy(b); below(a, b) = above(b, a) (margins in pixels).
* :func:`box_iou` — area(a ∩ b) / area(a ∪ b), 0 when the union is empty.
* :func:`pixel_rect` — the integer rectangle ``(x0, y0, x1, y1)`` (x1, y1 exclusive) covering a box:
  x0 = max(0, ⌊x⌋ − pad), y0 = max(0, ⌊y⌋ − pad), x1 = min(W, ⌈x + w⌉ + pad), y1 = min(H, ⌈y + h⌉ + pad).

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def box_centre(box: Sequence[float]) -> tuple[float, float]:
    """(x + w/2, y + h/2) of an ``[x, y, w, h]`` box."""
    return box[0] + box[2] / 2.0, box[1] + box[3] / 2.0


def centre_relation_holds(a: Sequence[float], b: Sequence[float], relation: str, margin_x: float = 0.0,
                          margin_y: float = 0.0) -> bool:
    """Whether ``a relation b`` holds under the centre rule (module docstring) for left/right of, above/below."""
    if relation in ("right of", "below"):
        a, b, relation = b, a, ("left of" if relation == "right of" else "above")
    if relation == "left of":
        return box_centre(a)[0] + margin_x < box_centre(b)[0]
    if relation == "above":
        return box_centre(a)[1] + margin_y < box_centre(b)[1]
    raise ValueError(f"not a centre relation: {relation!r}")


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``[x, y, w, h]`` boxes (0 when the union is empty)."""
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def pixel_rect(box: Sequence[float], width: int, height: int, pad: int = 0) -> tuple[int, int, int, int]:
    """Integer (x0, y0, x1, y1) covering the box (floor/ceil), padded by ``pad`` and clipped to the image."""
    x, y, w, h = box
    return (max(0, math.floor(x) - pad), max(0, math.floor(y) - pad),
            min(width, math.ceil(x + w) + pad), min(height, math.ceil(y + h) + pad))
