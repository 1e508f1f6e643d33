"""A real `muse studio` process on loopback for the tests, and a tiny HTTP client that speaks to it as a browser
would (the session cookie, the CSRF token of the page) or as an attacker would (no token, a foreign Host)."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_BOOK = ROOT / "examples" / "sanguo"
#: Where the browser tests keep their screenshots (CI keeps this folder as the run's artefacts).
ARTIFACTS = Path(os.environ.get("MUSE_ARTIFACTS_DIR", ROOT / ".artifacts")) / "studio"
SECRET = "sk-studio-test-7b1f0c9e4d2a"  # the API key put in the environment: no response may hold it


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Studio:
    """A running `muse studio --no-browser` on a book."""

    book: Path
    proc: subprocess.Popen[str]
    url: str  # the printed link, with the token
    started_s: float  # from the process start to the printed link
    base: str = field(init=False)
    port: int = field(init=False)
    token: str = field(init=False)

    def __post_init__(self) -> None:
        m = re.match(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)$", self.url)
        assert m, self.url
        self.port, self.token = int(m.group(1)), m.group(2)
        self.base = f"http://127.0.0.1:{self.port}"

    @property
    def cookie(self) -> str:
        return f"muse_studio_{self.port}={self.token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        cookie: bool = True,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if cookie:
            sent["Cookie"] = self.cookie
        body = None
        if form is not None:
            body = urlencode(form).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=sent)
        r = conn.getresponse()
        reply = Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace"))
        conn.close()
        return reply

    def csrf(self) -> str:
        page = self.request("GET", "/")
        m = re.search(r'name="csrf-token" content="([^"]+)"', page.body)
        assert m, page.body[:500]
        return m.group(1)

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


def copy_sample(to: Path) -> Path:
    """A copy of the sample book (the first ten chapters of 三国演义, outline 11)."""
    shutil.copytree(SAMPLE_BOOK, to)
    return to


def start(book: Path, *args: str, env: dict[str, str] | None = None) -> Studio:
    """Start `muse studio --no-browser` on `book` (a real process) and wait for the link it prints."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    full.update({"MUSE_CONFIG": str(book.parent / "no-user-config.toml"), "DS_API_KEY": SECRET, **(env or {})})
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "novelmuse", "studio", "--no-browser", "--book", str(book), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://\S+", line)
    if not m:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"muse studio printed no link: {line!r} {err}")
    return Studio(book, proc, m.group(0), time.perf_counter() - t0)
