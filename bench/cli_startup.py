"""How long ``ndnsci --help`` takes, against a bare interpreter start (median of N runs).

    .venv/bin/python bench/cli_startup.py [--runs 21]

One figure per line: the command's median wall time, the interpreter's, and the difference
(what ndnsci's imports and argument parser cost). The target is under 0.3 s for the command.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_seconds(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    script = shutil.which("ndnsci", path=str(Path(sys.executable).parent)) or "ndnsci"
    for label, command in (
        ("ndnsci --help", [script, "--help"]),
        ("ndnsci fetch --help", [script, "fetch", "--help"]),
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("python -c 'import ndnsci'", [sys.executable, "-c", "import ndnsci"]),
    ):
        median_seconds(command, 2)  # warm the page cache
        print(f"{label:28s} {median_seconds(command, args.runs) * 1000:7.1f} ms (median)")


if __name__ == "__main__":
    main()
