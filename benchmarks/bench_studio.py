"""Benchmark: `muse studio` on a 120-chapter book — the pages an author opens most, served warm, and the start.

The book is `bench_report`'s: the whole of 三国演义 imported with `muse import`, rules that hit, a stored review
with quotes and a revision for every chapter; plus the sample book's canon cards (so the memory page has cards
to replay as of chapter 100). A real `muse studio --no-browser` process on loopback serves it.

Measured in one run:

1. start: from launching `muse studio` to the first page (the desk) received — target ≤ 1.5 s;
2. warm, each page requested --n times after two warm-ups: the desk (`/`), the chapter page of chapter 100 and
   the memory page as of chapter 100 — target p95 ≤ 150 ms of server time (the Server-Timing the studio sends:
   from the request's arrival to its response), the time seen by the client printed beside it;
3. baselines, whole processes on the same book: `muse status --json` (what the desk shows) and
   `muse report --chapter 100` (the same chapter page and the memory page, written as files).

    python benchmarks/bench_studio.py [--n 40]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bench_report import make_book  # noqa: E402

START_TARGET_S = 1.5
PAGE_TARGET_MS = 150.0
PAGES = {"desk": "/", "chapter 100": "/chapters/0100.html", "memory as of 100": "/memory.html?as_of=100"}


def _env(root: Path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}, "MUSE_CONFIG": str(root / "n.toml")}


def _get(port: int, path: str, cookie: str) -> tuple[int, float, float]:
    """Status, server time (ms, from Server-Timing) and client time (ms) of one GET."""
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
    r = conn.getresponse()
    r.read()
    client = (time.perf_counter() - t0) * 1000
    m = re.search(r"dur=([\d.]+)", r.getheader("server-timing") or "")
    conn.close()
    return r.status, float(m.group(1)) if m else float("nan"), client


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


def _whole(args: list[str], root: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "novelmuse", *args], check=True, capture_output=True, env=_env(root))
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    n = ap.parse_args().n
    with tempfile.TemporaryDirectory(prefix="muse-bench-studio-") as tmp:
        root = Path(tmp)
        make_book(root)
        book = root / "b"
        shutil.copytree(ROOT / "examples" / "sanguo" / "cards", book / "cards", dirs_exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "novelmuse", "sync", "--no-extract", "--book", str(book)],
            capture_output=True,
            env=_env(root),
        )
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "novelmuse", "studio", "--no-browser", "--book", str(book)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(root),
        )
        try:
            assert proc.stdout is not None
            m = re.search(r"127\.0\.0\.1:(\d+)/\?token=(\S+)", proc.stdout.readline())
            assert m, "muse studio printed no link"
            port, cookie = int(m.group(1)), f"muse_studio_{m.group(1)}={m.group(2)}"
            status, _, _ = _get(port, "/", cookie)
            start_s = time.perf_counter() - t0
            assert status == 200
            rows: dict[str, tuple[float, float, float]] = {}
            for name, path in PAGES.items():
                for _ in range(2):
                    _get(port, path, cookie)
                server, client = [], []
                for _ in range(n):
                    code, s, c = _get(port, path, cookie)
                    assert code == 200, (path, code)
                    server.append(s)
                    client.append(c)
                rows[name] = (statistics.median(server), _p95(server), _p95(client))
        finally:
            proc.terminate()
            proc.wait(timeout=15)
        status_s = min(_whole(["status", "--json", "--book", str(book)], root) for _ in range(3))
        report = ["report", "--chapter", "100", "--book", str(book), "--out", str(root / "r")]
        report_s = min(_whole(report, root) for _ in range(3))
    print(f"book: 120 chapters of 三国演义 with a review per chapter; {os.cpu_count()} core(s)")
    ok = start_s <= START_TARGET_S
    print(f"start → first page     {start_s:6.2f} s   (target ≤ {START_TARGET_S} s)  {'ok' if ok else 'MISSED'}")
    base = {"desk": status_s, "chapter 100": report_s, "memory as of 100": report_s}
    label = {"desk": "muse status --json", "chapter 100": "muse report --chapter 100", "memory as of 100": "idem"}
    for name, (median, p95, client) in rows.items():
        hit = p95 <= PAGE_TARGET_MS
        ok &= hit
        ratio = base[name] * 1000 / p95
        print(
            f"{name:<20} server median {median:6.1f} ms  p95 {p95:6.1f} ms (client p95 {client:6.1f} ms)"
            f"  target ≤ {PAGE_TARGET_MS:.0f} ms {'ok' if hit else 'MISSED'}"
            f"   baseline {label[name]} {base[name]:5.2f} s = {ratio:4.1f}x the page"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
