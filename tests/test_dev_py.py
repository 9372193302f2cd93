"""dev.py, the README's two commands: quiet set-up stages and the test selection."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from support import REPO

_spec = importlib.util.spec_from_file_location("dev", REPO / "dev.py")
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)


@pytest.mark.parametrize("argv, expected", [
    ([], ["-q", "-n", "auto", "-m", "not slow"]),
    (["--slow"], ["-q", "-n", "auto", "-m", "slow"]),
    (["--all", "-x"], ["-q", "-n", "auto", "-x"]),
    (["-n", "0", "tests/test_cli.py"], ["-q", "-m", "not slow", "-n", "0", "tests/test_cli.py"]),
    (["-n2"], ["-q", "-m", "not slow", "-n2"]),
    (["-p", "no:xdist"], ["-q", "-m", "not slow", "-p", "no:xdist"]),
    (["-m", "slow and not e2e"], ["-q", "-n", "auto", "-m", "slow and not e2e"]),
    (["--slow", "-k", "parser"], ["-q", "-n", "auto", "-m", "slow", "-k", "parser"]),
])
def test_pytest_arguments(argv: list[str], expected: list[str]):
    assert dev.pytest_args(argv) == expected


def test_basetemp_is_in_ram_unless_chosen_or_unavailable(monkeypatch):
    from pathlib import Path

    assert dev.test_basetemp(["--basetemp", "/tmp/mine"]) == [] == dev.test_basetemp(["--basetemp=/tmp/mine"])
    monkeypatch.setattr(dev.os, "access", lambda path, mode: False)
    assert dev.test_basetemp([]) == []
    monkeypatch.setattr(dev.os, "access", lambda path, mode: True)
    monkeypatch.setattr(Path, "is_dir", lambda self: str(self) == "/dev/shm")
    [arg] = dev.test_basetemp(["-x"])
    assert arg.startswith("--basetemp=/dev/shm/pytest-of-lrc-") and arg == dev.test_basetemp([])[0]  # one per checkout


_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
import dev
with dev._Stage("installing things"):
    dev._quiet([sys.executable, "-c", {cmd!r}], "installing things failed")
print("after")
"""


@pytest.mark.parametrize("cmd, rc", [
    ("print('pip noise\\n' * 250)", 0),
    ("import sys; print('pip noise\\n' * 250); print('ERROR: hash mismatch'); sys.exit(1)", 1),
    ("import sys; sys.stderr.write('ERROR: on stderr\\n'); sys.exit(2)", 1),
])
def test_a_stage_is_one_line_with_its_time_and_shows_the_output_only_when_it_fails(cmd: str, rc: int):
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(root=str(REPO), cmd=cmd)], capture_output=True, text=True, timeout=120)
    assert done.returncode == rc
    first = done.stdout.splitlines()[0]
    if rc == 0:
        assert done.stdout.splitlines() == [first, "after"]
        assert first.startswith("[dev] installing things … ") and first.endswith(" s")
        assert "pip noise" not in done.stdout
    else:
        assert first.startswith("[dev] installing things … failed (exit ")
        assert "ERROR:" in done.stdout and "after" not in done.stdout
        assert "installing things failed" in done.stderr


@pytest.mark.parametrize("root, apt, rc", [(True, True, 100), (False, True, 0), (True, False, 0), (True, True, 0)])
def test_the_chromium_stage_never_fails_set_up(monkeypatch, capsys, root: bool, apt: bool, rc: int):
    """Optional: installed when absent (apt-get, as root); otherwise, or when apt-get fails, one line why."""
    import shutil

    calls = []
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" and apt else None)
    monkeypatch.setattr(dev.os, "geteuid", lambda: 0 if root else 1000)
    monkeypatch.setattr(dev.subprocess, "run", lambda cmd, **kw: calls.append(cmd) or
                        subprocess.CompletedProcess(cmd, rc, "E: Unable to locate package chromium\n"))
    dev.browser()
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1, out
    if not (root and apt):
        assert "will be skipped" in out and not calls
    elif rc:
        assert "skipped:" in out and "Unable to locate package chromium" in out
        assert calls[1][:2] == ["apt-get", "update"]  # missing package lists are fetched once
    else:
        assert out.startswith("[dev] installing chromium") and out.rstrip().endswith(" s") and len(calls) == 1


def test_ctrl_c_lets_the_running_command_stop_its_own_way(tmp_path):
    """Ctrl-C goes to the whole process group: dev.py waits for its command (which may be stopping
    cleanly, as `lrc execute` does) and returns that command's exit code, without a traceback."""
    from helpers.ctrl_c import ctrl_c_when_ready

    ready = tmp_path / "ready"
    child = ("import signal, sys, time, pathlib\n"
             "signal.signal(signal.SIGINT, lambda *a: (time.sleep(0.5), sys.exit(7)))\n"
             f"pathlib.Path({str(ready)!r}).write_text('x')\n"
             "time.sleep(60)\n")
    driver = ("import importlib.util, sys\n"
              f"spec = importlib.util.spec_from_file_location('dev', {str(REPO / 'dev.py')!r})\n"
              "dev = importlib.util.module_from_spec(spec); spec.loader.exec_module(dev)\n"
              f"sys.exit(dev._run([sys.executable, '-c', {child!r}]))\n")
    res = ctrl_c_when_ready(driver, ready)
    assert res.returncode == 7, res.stderr
    assert "Traceback" not in res.stderr
