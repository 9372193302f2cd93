#!/usr/bin/env python3
"""Prints how long `lrc compile` of the repository's project takes as a whole process
(median of N runs, in a scratch copy so the repository is untouched). Target: < 0.5 s.

    .venv/bin/python benchmarks/compile_speed.py [--runs 5]

- cold `lrc compile`: no `.lrc-cache/`, and generated/<edition>/ removed so every lock and
  sample prompt is rebuilt and written (the real work of a compile);
- warm `lrc compile`: the same, with the `.lrc-cache/` a previous compile left (only printed
  if a compile creates such a folder);
- `lrc compile --check` of an up-to-date tree (the pull-request gate), cold and (if a cache
  exists) warm;
- for scale: a bare interpreter, and the interpreter plus the compile path's imports.
Figures, not assertions: speed is tracked here, not in timed tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CACHE_DIR, LRC, copy_project, fmt_runs, median_of, settle, timed  # noqa: E402

TARGET_S = 0.5


def find_caches(project: Path) -> list[Path]:
    """Cache folders a compile left: `.lrc-cache` at the project root or anywhere below it."""
    found = [project / CACHE_DIR] if (project / CACHE_DIR).exists() else []
    found += [p for p in project.rglob(f"{CACHE_DIR}*") if p not in found]
    return found


def edition_dirs(project: Path) -> list[Path]:
    gen = project / "generated"
    return [d for d in sorted(gen.iterdir()) if d.is_dir() and (d / "plan.lock").exists()] if gen.is_dir() else []


def clear(paths: list[Path]) -> None:
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()


def line(label: str, med: float, samples: list[float]) -> str:
    mark = "OK" if med < TARGET_S else "over target"
    return f"{label}: median {med:.3f} s  ({mark}; target < {TARGET_S} s; runs: {fmt_runs(samples)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    n = ap.parse_args().runs
    scratch = Path(tempfile.mkdtemp(prefix="lrc-speed-"))
    try:
        project = copy_project(scratch / "project")
        compile_cmd = [*LRC, "compile", "--project", str(project)]
        check_cmd = [*LRC, "compile", "--check", "--project", str(project)]
        clear(find_caches(project))
        note = settle(project)  # generated/ up to date (the repository's copy may be stale while others edit)
        editions = [d.name for d in edition_dirs(project)]
        cache_appeared = bool(find_caches(project))

        def compile_cold(i: int) -> float:
            clear(find_caches(project) + [project / "generated" / e for e in editions])
            return timed(compile_cmd)

        def compile_warm(i: int) -> float:
            clear([project / "generated" / e for e in editions])
            return timed(compile_cmd)

        def check_cold(i: int) -> float:
            clear(find_caches(project))
            return timed(check_cmd)

        def check_warm(i: int) -> float:
            return timed(check_cmd)

        bare_med, _ = median_of(n, lambda i: timed([sys.executable, "-c", "pass"]))
        imp_med, _ = median_of(n, lambda i: timed([sys.executable, "-c", "import lrc.compiler.cli, lrc.compiler.pipeline"]))
        cc_med, cc_all = median_of(n, compile_cold)
        timed(compile_cmd)  # restore generated/ (and a cache, if any) before the checks
        ck_med, ck_all = median_of(n, check_cold)
        if cache_appeared:
            timed(compile_cmd)
            cw_med, cw_all = median_of(n, compile_warm)
            timed(compile_cmd)
            kw_med, kw_all = median_of(n, check_warm)

        print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
        print(f"project: the repository's specs/ + schemas/ + generated/ (editions: {', '.join(editions) or 'none'}), in a scratch copy")
        print(f"commands: {' '.join(LRC)} compile [--check] --project <copy>")
        if note:
            print(note)
        print(line("lrc compile, cold (no cache, locks rewritten)", cc_med, cc_all))
        if cache_appeared:
            print(line(f"lrc compile, warm ({CACHE_DIR}/ present, locks rewritten)", cw_med, cw_all))
        else:
            print(f"lrc compile, warm: no {CACHE_DIR}/ appeared after a compile, so there is no warm figure")
        print(line("lrc compile --check, cold (up-to-date tree, no cache)", ck_med, ck_all))
        if cache_appeared:
            print(line(f"lrc compile --check, warm ({CACHE_DIR}/ present)", kw_med, kw_all))
        print(f"for scale: bare interpreter {bare_med:.3f} s; interpreter + compile-path imports {imp_med:.3f} s "
              f"(imports alone {imp_med - bare_med:.3f} s); so compile work after imports ≈ {cc_med - imp_med:.3f} s cold")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
