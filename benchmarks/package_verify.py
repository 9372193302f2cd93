"""Size of the demo's reproducibility package and the time of `lrc package` and `lrc verify` on it
(issue 15 §5 closing figures).

Executes the committed demo lock into a fresh folder (or uses --run DIR, an existing demo run
folder), packages it twice (the two packages must be byte-identical), and verifies it, each
through the installed `lrc` as a user would run it.

    .venv/bin/python benchmarks/package_verify.py [--run DIR] [--repeat 1]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LRC = [sys.executable, "-m", "lrc.compiler.cli"]


def _run(*args: str | Path) -> float:
    started = time.perf_counter()
    res = subprocess.run([*LRC, *map(str, args)], cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if res.returncode != 0:
        sys.exit(f"lrc {' '.join(map(str, args))} exited {res.returncode}:\n{res.stdout}\n{res.stderr}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, help="an existing `lrc execute generated/demo/plan.lock` folder")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lrc-bench-pkg-") as tmp:
        run = args.run
        if run is None:
            run = Path(tmp) / "demo"
            print(f"execute the demo: {_run('execute', REPO / 'generated/demo/plan.lock', '--out', run, '--no-progress'):.1f} s")
        pkg_a, pkg_b = Path(tmp) / "a.tar.gz", Path(tmp) / "b.tar.gz"
        package_s = [_run("package", run, "--out", pkg_a)]
        _run("package", run, "--out", pkg_b)
        same = pkg_a.read_bytes() == pkg_b.read_bytes()
        verify_s = [_run("verify", pkg_a) for _ in range(args.repeat)]
        size = pkg_a.stat().st_size
        print(f"package: {size:,} bytes ({size / 1e6:.1f} MB), sha256 {hashlib.sha256(pkg_a.read_bytes()).hexdigest()[:16]}…, "
              f"two builds byte-identical: {same}")
        print(f"lrc package: {statistics.median(package_s):.1f} s")
        print(f"lrc verify:  {statistics.median(verify_s):.1f} s (median of {len(verify_s)}; "
              f"runs {', '.join(f'{s:.1f}' for s in verify_s)})")


if __name__ == "__main__":
    main()
