"""Ctrl-C as a terminal sends it: SIGINT to a whole process group, at a moment the test chooses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def ctrl_c_when_ready(code: str, ready: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `python -c code` in a session (a process group) of its own; once it has created the file
    `ready`, send SIGINT to the group, as a terminal's Ctrl-C does, and wait for it to end."""
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
