"""Peak resident memory of this process, resettable on Linux (shared by the benchmarks that report it)."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_gb() -> float:
    """Peak resident set size (VmHWM, resettable on Linux; else the process's ru_maxrss)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024 ** 2
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False
