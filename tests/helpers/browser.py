"""Headless Chromium over the DevTools protocol on a pipe (`--remote-debugging-pipe`): load a
page from disk, collect every console error, uncaught exception and failed load, measure
elements' boxes and take a full-page screenshot -- one browser launch, no websocket library.

Why the protocol and not `chromium --screenshot` + `--enable-logging=stderr`: the logging
prints every console message as INFO, whatever its level, and never a failed resource load,
and a bare screenshot says nothing about where each chart is. The protocol reports levels,
exceptions and network failures as events, and gives each chart's box in CSS pixels.

Messages are JSON, each ended by a NUL byte; Chromium reads commands from fd 3 and writes
replies and events to fd 4.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


_LOG = subprocess.DEVNULL  # where chromium's own log goes (a file while debugging)


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


@dataclass
class Rendered:
    png: bytes
    boxes: dict[str, dict[str, float]]  # element id -> {x, y, width, height} in page CSS pixels
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads


class _Pipe:
    def __init__(self, exe: str, profile: str):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # runs in the child: the protocol's fixed descriptors
            # Move both ends above 3 and 4 first (either may already sit on 3 or 4), then place
            # them; os.dup2 makes the copies inheritable (os.pipe's ends are close-on-exec).
            high_r, high_w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=_LOG, preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 30) -> dict[str, Any]:
        self._next += 1
        mid = self._next
        msg = {"id": mid, "method": method, "params": params or {}, **({"sessionId": session} if session else {})}
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == mid:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._read(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


def render(page: Path, selector: str, width: int = 1280, exe: str | None = None) -> Rendered:
    """Load `page` (a file), return its full-page screenshot, the boxes of the elements matching
    `selector` (by id; an element holding an <svg> is measured by its svg) and every error the
    browser reported."""
    exe = exe or chromium()
    if exe is None:
        raise RuntimeError("no chromium on PATH")
    with tempfile.TemporaryDirectory(prefix="lrc-chromium-") as profile:
        cdp = _Pipe(exe, profile)
        try:
            target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            s = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                cdp.call(f"{domain}.enable", session=s)
            cdp.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
            cdp.call("Page.navigate", {"url": page.resolve().as_uri()}, session=s)
            cdp.wait_event("Page.loadEventFired")
            js = ("JSON.stringify({h: document.documentElement.scrollHeight, boxes: Object.fromEntries(["
                  f"...document.querySelectorAll({json.dumps(selector)})].map(e => {{const r = (e.querySelector('svg') || e).getBoundingClientRect(); "
                  "return [e.id, {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}]}))})")
            answer = cdp.call("Runtime.evaluate", {"expression": js, "returnByValue": True}, session=s)
            if "value" not in answer.get("result", {}):
                raise RuntimeError(f"measuring the page failed: {answer}")
            found = json.loads(answer["result"]["value"])
            height = int(found["h"])
            cdp.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=s)
            shot = cdp.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                       "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}, session=s)
            errors = []
            for e in cdp.events:
                m, p = e.get("method"), e.get("params", {})
                if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                    errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
                elif m == "Runtime.exceptionThrown":
                    errors.append("exception: " + str(p.get("exceptionDetails", {}).get("exception", {}).get("description")
                                                     or p.get("exceptionDetails", {}).get("text")))
                elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                    errors.append("log: " + str(p["entry"].get("text")) + " " + str(p["entry"].get("url", "")))
                elif m == "Network.loadingFailed":
                    errors.append("load failed: " + str(p.get("errorText")))
            return Rendered(png=base64.b64decode(shot["data"]), boxes=found["boxes"], errors=errors)
        finally:
            cdp.close()
