"""The one dtype vocabulary of every backend and every ``--dtype`` option.

Accepted spellings (case-insensitive) and the dtype each names:

* ``auto`` — bfloat16 on a GPU, float32 on the CPU (the papers score in bfloat16 on GPUs, VCA §19);
* ``float32``, ``fp32``; ``float16``, ``fp16``, ``half``; ``bfloat16``, ``bf16``.

:func:`parse_dtype` maps a spelling to its canonical name (the torch attribute name, e.g. ``"bfloat16"``),
:func:`resolve_dtype` also settles ``auto`` for a device, and :func:`check_supported` is how a backend that
runs only some of them (the shipped reference models run float32 on the CPU) refuses the rest with a list of
what it supports. Torch-free, so that the command layer can check a ``--dtype`` before anything loads; the
backends turn a canonical name into a torch dtype with ``getattr(torch, name)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from vlaudit.errors import InputError

AUTO = "auto"
# spelling -> canonical name (the torch attribute)
DTYPE_SPELLINGS: dict[str, str] = {
    "auto": AUTO,
    "float32": "float32", "fp32": "float32",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
}
DTYPES = ("float32", "float16", "bfloat16")  # the canonical names (besides auto)
DTYPE_HELP = ("auto (bfloat16 on a GPU, float32 on the CPU), float32 (fp32), float16 (fp16, half) or "
              "bfloat16 (bf16).")


def _accepted() -> str:
    return ", ".join(DTYPE_SPELLINGS)


def parse_dtype(spelling: str | None, *, field: str = "dtype") -> str:
    """The canonical name of ``spelling`` (``"auto"`` for None); an unknown one lists the accepted spellings."""
    if spelling is None:
        return AUTO
    canonical = DTYPE_SPELLINGS.get(str(spelling).strip().lower())
    if canonical is None:
        raise InputError(f"unknown dtype {spelling!r}; use one of {_accepted()}", field=field)
    return canonical


def resolve_dtype(spelling: str | None, device_type: str, *, field: str = "dtype") -> str:
    """The concrete canonical name on a device of ``device_type`` (``"cuda"``, ``"cpu"``, ...): auto is
    bfloat16 on CUDA and float32 elsewhere."""
    canonical = parse_dtype(spelling, field=field)
    if canonical == AUTO:
        return "bfloat16" if device_type.startswith("cuda") else "float32"
    return canonical


def check_supported(spelling: str | None, supported: Sequence[str], backend: str, *,
                    field: str = "dtype") -> str:
    """``spelling``'s canonical name when ``backend`` runs it (``auto`` always: the backend's own dtype),
    else an error that names what ``backend`` supports."""
    canonical = parse_dtype(spelling, field=field)
    if canonical != AUTO and canonical not in supported:
        listed = ", ".join([AUTO, *supported])
        raise InputError(f"{backend} cannot run dtype {canonical}; it supports {listed}", field=field)
    return canonical
