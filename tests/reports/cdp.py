"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``, standard library only.

Chromium reads commands from fd 3 and writes replies and events to fd 4, each a JSON message ended by a
NUL byte. One page target is attached in flat mode; events are kept so a test can inspect every network
request the page made. Nothing here needs the network: the browser is Debian's chromium, started headless
with a fresh profile and the flags that keep it from calling home.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    """Debian's chromium (or a chromium/chrome on PATH)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """Headless Chromium with one page, driven over the debugging pipe."""

    def __init__(self, executable: str, *, width: int = 1400, height: int = 900, timeout: float = 30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="muse-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: fd 3 = commands in, fd 4 = replies out
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_child_r, from_child_w, 3, 4),  # 3 and 4 as wired by `wire`
            preexec_fn=wire,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.page(f"{domain}.enable")
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    # -- transport ------------------------------------------------------------------------------------
    def _send(self, method: str, params: dict[str, Any], session: str | None) -> int:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise CDPError("no reply from chromium in time")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise CDPError("chromium closed the debugging pipe")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        doc: dict[str, Any] = json.loads(raw)
        return doc

    def _call(self, method: str, params: dict[str, Any], session: str | None) -> dict[str, Any]:
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == wanted:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            if "method" in msg:
                self.events.append(msg)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """A browser-level command."""
        return self._call(method, params, None)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the attached page."""
        return self._call(method, params, self.session)

    def wait_event(self, method: str, *, since: int = 0) -> dict[str, Any]:
        """The first event `method` received after index `since` (reading more until it arrives)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for ev in self.events[since:]:
                if ev.get("method") == method:
                    return ev
            msg = self._read(deadline)
            if "method" in msg:
                self.events.append(msg)

    # -- page helpers ---------------------------------------------------------------------------------
    def goto(self, path: Path) -> None:
        """Load a file and wait for its load event (scripts have run)."""
        mark = len(self.events)
        self.page("Page.navigate", url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired", since=mark)

    def js(self, expression: str) -> Any:
        """Evaluate an expression in the page and return its JSON value."""
        res = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise CDPError(f"script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A real mouse click at viewport coordinates."""
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.page("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}
        data = self.page("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def requested_urls(self) -> list[str]:
        """Every URL the page asked for (documents included)."""
        return [ev["params"]["request"]["url"] for ev in self.events if ev.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
