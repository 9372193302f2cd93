"""Run the `run:` steps of a GitHub Actions workflow file locally, the way a runner would.

Only what docs/specs-repository-ci.yml uses is supported: top-level and job-level `env:`,
steps with `run:` (bash, `-eo pipefail`, in the checkout), `$RUNNER_TEMP`, and `$GITHUB_PATH`
(lines appended to it are put in front of PATH for the following steps). `uses:` steps are
the caller's business (the checkout is the folder given; python3 is the one on PATH).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ruamel.yaml import YAML


@dataclass
class StepResult:
    name: str
    command: str
    returncode: int
    stdout: str
    stderr: str


def load(path: Path) -> dict:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def run_steps(workflow: Path, checkout: Path, runner_temp: Path, *, env: dict[str, str] | None = None,
              path_prefix: list[str] | None = None, select: Callable[[dict], bool] = lambda step: True,
              timeout: int = 900) -> list[StepResult]:
    """Run the selected `run:` steps of every job in order; stop at the first failing one."""
    doc = load(workflow)
    runner_temp.mkdir(parents=True, exist_ok=True)
    github_path = runner_temp / "github_path"
    github_path.touch()
    extra_path = list(path_prefix or [])
    results = []
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "run" not in step or not select(step):
                continue
            added = [line for line in github_path.read_text().splitlines() if line.strip()]
            full_env = {**os.environ, **{k: str(v) for k, v in (doc.get("env") or {}).items()},
                        **{k: str(v) for k, v in (job.get("env") or {}).items()}, **(env or {}),
                        "RUNNER_TEMP": str(runner_temp), "GITHUB_PATH": str(github_path), "GITHUB_ACTIONS": "true"}
            full_env["PATH"] = os.pathsep.join([*reversed(added), *extra_path, full_env.get("PATH", "")])
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=checkout,
                                  env=full_env, capture_output=True, text=True, timeout=timeout)
            results.append(StepResult(step.get("name", step["run"]), step["run"], done.returncode, done.stdout, done.stderr))
            if done.returncode:
                return results
    return results
