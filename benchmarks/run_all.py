"""Run every benchmark (`benchmarks/bench_*.py`) in turn, each in its own process, and summarise.

    python benchmarks/run_all.py            # all of them (this is what `python3 dev.py bench` runs)
    python benchmarks/run_all.py rules llm  # only those whose name contains one of the words

Each benchmark prints its own figures with a baseline measured in the same run and exits non-zero when it
misses a target; this script exits non-zero if any of them did.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    benches = sorted(HERE.glob("bench_*.py"))
    if words:
        benches = [b for b in benches if any(w in b.stem for w in words)]
    if not benches:
        print(f"no benchmark matches {' '.join(words)!r} in {HERE}", file=sys.stderr)
        return 2
    print(f"{len(benches)} benchmark(s) on {os.cpu_count()} core(s); load average {os.getloadavg()[0]:.2f}")
    results: list[tuple[str, int, float]] = []
    for bench in benches:
        print(f"\n=== {bench.stem} ===", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, str(bench)], cwd=HERE.parent)
        results.append((bench.stem, rc, time.perf_counter() - t0))
    print("\n=== summary ===")
    for name, rc, secs in results:
        print(f"{name:<24} {'ok' if rc == 0 else f'FAILED (exit {rc})':<16} {secs:7.1f} s")
    return 0 if all(rc == 0 for _, rc, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
