#!/usr/bin/env python3
"""Prints lrc's compile time per workload spec on a generated tree of 1,000 workloads, beside
lm-evaluation-harness's time to index one task YAML, and where lrc's time goes.

    .venv/bin/python benchmarks/many_specs.py [--count 1000] [--runs 3] [--no-lm-eval] [--no-profile]

Trees (scratch copies; the repository is untouched):
- base: the repository's specs/ + schemas/ + generated/;
- big:  base + COUNT workloads `bench.w0001`... derived from triage.ap-inbox, each with its own
  prompt files and output schema, no two identical; no edition pins them.
Per spec = (median whole-process `lrc compile` of big - median of base) / COUNT, with both
trees already compiled once (their ledgers record every spec, so a compile writes nothing:
the steady state of an author's edit-compile loop). Cold = no `.lrc-cache/`; warm is printed
only if a compile leaves such a folder. The goal is <= 0.23 ms per spec, i.e. five times faster
than lm-eval indexes one task YAML (research figure ≈ 1.16 ms; measured here by
lm_eval_index.py when /tmp/lmeval-venv exists).

Also printed: the big tree's first compile (which records COUNT new ledger entries and
snapshots), one run. Where the time goes: a smaller tree (base + --profile-count workloads,
default 100) is compiled in-process under cProfile, its time split by stage (cache: reading
the compile cache and checking each spec's unit against the bytes on disk; load, validate,
resolve, render, gate, emit) by wrapping the stage functions `compiler/pipeline.py` calls,
each stage with its own profiler, with the heaviest functions of each stage; then a second
in-process compile of it (cache warm) is split by stage without a profiler. The default run
takes about 2 minutes, most of it the cold compiles; lm-eval is measured by
lm_eval_index.py (see there for its virtualenv).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CACHE_DIR, LRC, copy_project, derive_workloads, fmt_runs, forget_code_versions, median_of, settle, timed  # noqa: E402

GOAL_MS = 0.23
STAGES = ("cache", "load", "validate", "resolve", "render", "gate", "emit")


def has_cache(project: Path) -> bool:
    return (project / CACHE_DIR).exists() or any(project.rglob(f"{CACHE_DIR}*"))


def clear_cache(project: Path) -> None:
    for p in [project / CACHE_DIR, *project.rglob(f"{CACHE_DIR}*")]:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()


# -- stage instrumentation ------------------------------------------------------------------

class StageClock:
    """Wraps stage functions; the outermost wrapped call owns the time (no double counting)."""

    def __init__(self, profile: bool):
        self.profile = profile
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.profiles: dict[str, cProfile.Profile] = {s: cProfile.Profile() for s in STAGES} if profile else {}
        self.depth = 0
        self.wrapped: dict[str, list[str]] = defaultdict(list)
        self.missing: list[str] = []
        self._undo: list[tuple[object, str, object]] = []

    def _wrap(self, stage: str, fn):
        clock = self

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if clock.depth:
                return fn(*args, **kwargs)
            clock.depth += 1
            prof = clock.profiles.get(stage)
            start = time.perf_counter()
            if prof:
                prof.enable()
            try:
                return fn(*args, **kwargs)
            finally:
                if prof:
                    prof.disable()
                clock.seconds[stage] += time.perf_counter() - start
                clock.calls[stage] += 1
                clock.depth -= 1
        return wrapper

    def patch(self, stage: str, owner, name: str, label: str, kind: str = "function") -> None:
        raw = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if raw is None:
            self.missing.append(label)
            return
        if kind == "classmethod":
            inner = raw.__func__ if isinstance(raw, classmethod) else raw
            new = classmethod(self._wrap(stage, inner))
        else:
            new = self._wrap(stage, raw)
        self._undo.append((owner, name, raw))
        setattr(owner, name, new)
        self.wrapped[stage].append(label)

    def install(self) -> None:
        from lrc.compiler import emit, pipeline, policy, validate, versioning
        from lrc.compiler import resolve as resolve_mod
        from lrc.runtime.lock import codeprint
        from lrc.runtime.lock import format as lockformat

        from lrc.compiler import cache as cache_mod
        from lrc.compiler import load as load_mod
        from lrc.compiler import units

        p = self.patch
        p("cache", cache_mod.Cache, "__init__", "Cache()")
        p("cache", units.Memo, "lookup", "Memo.lookup")
        p("cache", cache_mod.Cache, "save", "Cache.save")
        p("load", pipeline, "scan", "pipeline.scan")
        p("load", pipeline, "read_capped", "pipeline.read_capped")
        p("load", load_mod, "load_bytes", "load.load_bytes")
        p("validate", validate.SchemaSet, "load", "SchemaSet.load", kind="classmethod")
        p("validate", pipeline, "validate", "pipeline.validate")
        p("resolve", pipeline, "discover_components", "pipeline.discover_components")
        p("resolve", resolve_mod.Resolver, "index", "Resolver.index")
        p("resolve", resolve_mod.Resolver, "resolve", "Resolver.resolve")
        p("render", pipeline, "render_workload", "pipeline.render_workload")
        p("gate", codeprint, "fingerprint", "codeprint.fingerprint")
        p("gate", resolve_mod, "digest_value", "resolve.digest_value (spec digests)")
        p("gate", versioning.Ledger, "read", "Ledger.read", kind="classmethod")
        p("gate", pipeline, "check_taxonomy", "pipeline.check_taxonomy")
        p("gate", policy, "check_split_history", "policy.check_split_history")
        p("gate", pipeline, "gate", "pipeline.gate")
        p("emit", pipeline, "build_plan", "pipeline.build_plan")
        p("emit", lockformat, "build", "lockformat.build")
        p("emit", lockformat, "dumps", "lockformat.dumps")
        p("emit", pipeline, "snapshot_bytes", "pipeline.snapshot_bytes")
        p("emit", emit, "write", "emit.write")
        p("emit", emit, "check", "emit.check")

    def uninstall(self) -> None:
        for owner, name, raw in reversed(self._undo):
            setattr(owner, name, raw)
        self._undo.clear()


def _top(prof: cProfile.Profile, n: int, total: float) -> list[str]:
    st = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (file, line, func), (cc, nc, tt, ct, callers) in st.stats.items():  # type: ignore[attr-defined]
        rows.append((tt, ct, nc, file, line, func))
    rows.sort(reverse=True)
    out = []
    repo = str(Path(__file__).resolve().parent.parent) + os.sep
    for tt, ct, nc, file, line, func in rows[:n]:
        where = file.replace(repo, "").split("site-packages" + os.sep)[-1] if file != "~" else ""
        out.append(f"      {tt:7.2f} s self {100 * tt / total:5.1f}%  {nc:>8} calls  {func}  ({where}:{line})" if where
                   else f"      {tt:7.2f} s self {100 * tt / total:5.1f}%  {nc:>8} calls  {func}")
    return out


def profiled_compile(project: Path, top: int, count: int) -> list[str]:
    """One in-process compile of `project` (writing), timed and profiled by stage; `count` is
    how many generated workloads the project holds beyond the repository's (for per-spec figures)."""
    from lrc.compiler.pipeline import compile_project

    clock = StageClock(profile=True)
    clock.install()
    try:
        start = time.perf_counter()
        result = compile_project(project)
        total = time.perf_counter() - start
    finally:
        clock.uninstall()
    diags = result.diagnostics
    items = list(getattr(diags, "items", None) or getattr(diags, "diagnostics", None) or [])
    errors = [d for d in items if getattr(d, "severity", "") == "error"]
    lines = [f"in-process compile_project() under cProfile of the repository's specs + {count} generated workloads, no cache "
             f"(first compile: records the new specs): {total:.2f} s, {len(items)} diagnostics ({len(errors)} errors), "
             f"{len(result.changed)} files written"]
    if errors:
        shown = "\n".join(f"  {d.code} {d.path}:{d.line}: {d.summary}" for d in errors[:10])
        raise RuntimeError(f"the profiled tree does not compile ({len(errors)} errors):\n{shown}")
    attributed = sum(clock.seconds.values())
    for stage in STAGES:
        secs = clock.seconds.get(stage, 0.0)
        lines.append(f"  {stage:<9} {secs:7.2f} s  {100 * secs / total:5.1f}%  {1e3 * secs / count:7.2f} ms/spec  ({clock.calls.get(stage, 0)} calls of "
                     f"{', '.join(clock.wrapped.get(stage, [])) or 'nothing found'})")
        if secs > 0.02 * total:
            lines.extend(_top(clock.profiles[stage], top, total))
    lines.append(f"  {'other':<9} {total - attributed:7.2f} s  {100 * (total - attributed) / total:5.1f}%  "
                 f"(pipeline glue outside the wrapped functions, e.g. reading ledger snapshots)")
    if clock.missing:
        lines.append(f"  (stage functions not found, so not attributed: {', '.join(clock.missing)})")
    lines.extend(stage_times_warm(project, count))
    return lines


def stage_times_warm(project: Path, count: int) -> list[str]:
    """A second in-process compile of the same tree (its cache, if lrc keeps one, now warm),
    timed by stage without a profiler: the shares an optimization of the warm path would see."""
    from lrc.compiler.pipeline import compile_project

    clock = StageClock(profile=False)
    clock.install()
    try:
        start = time.perf_counter()
        compile_project(project)
        total = time.perf_counter() - start
    finally:
        clock.uninstall()
    warm = "cache warm" if has_cache(project) else "no cache folder"
    parts = [f"{stage} {clock.seconds.get(stage, 0.0):.2f} s ({100 * clock.seconds.get(stage, 0.0) / total:.0f}%)" for stage in STAGES]
    other = total - sum(clock.seconds.values())
    return [f"second in-process compile of the same tree ({warm}, nothing to record, no profiler): {total:.2f} s = "
            f"{1e3 * total / count:.2f} ms per generated spec, fixed costs included",
            "  " + ", ".join(parts) + f", other {other:.2f} s"]


# -- main ------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=1000, help="generated workloads (default 1000)")
    ap.add_argument("--runs", type=int, default=3, help="whole-process runs per figure (median; default 3)")
    ap.add_argument("--profile-count", type=int, default=100,
                    help="generated workloads in the tree profiled in-process (default 100: cProfile triples the time)")
    ap.add_argument("--top", type=int, default=6, help="functions listed per stage in the profile")
    ap.add_argument("--no-profile", action="store_true", help="skip the in-process profile")
    ap.add_argument("--no-lm-eval", action="store_true", help="do not measure lm-eval beside")
    ap.add_argument("--lm-eval-builtin", action="store_true",
                    help="also time lm-eval's default TaskManager() over its built-in tasks (about 10 s more)")
    args = ap.parse_args()
    count, runs = args.count, args.runs

    scratch = Path(tempfile.mkdtemp(prefix="lrc-many-"))
    try:
        base = copy_project(scratch / "base")
        big = copy_project(scratch / "big")
        t0 = time.perf_counter()
        derive_workloads(big, count)
        gen_s = time.perf_counter() - t0
        for tree in (base, big):
            clear_cache(tree)
        base_cmd = [*LRC, "compile", "--project", str(base)]
        big_cmd = [*LRC, "compile", "--project", str(big)]

        # Settle both trees: afterwards their ledgers record every spec and generated/ is up to date.
        note = settle(base)
        if note:
            forget_code_versions(big)
        clear_cache(base)
        first_s = timed(big_cmd)  # the big tree's first compile records COUNT new specs
        base_first_s = timed(base_cmd)

        def cold(cmd, tree):
            def run(i: int) -> float:
                clear_cache(tree)
                return timed(cmd)
            return run

        b_med, b_all = median_of(runs, cold(base_cmd, base))
        g_med, g_all = median_of(runs, cold(big_cmd, big))
        per_cold = (g_med - b_med) / count
        cache = has_cache(big) and has_cache(base)  # the last cold run of each tree left its cache, if lrc makes one
        if cache:
            bw_med, bw_all = median_of(runs, lambda i: timed(base_cmd))
            gw_med, gw_all = median_of(runs, lambda i: timed(big_cmd))
            per_warm = (gw_med - bw_med) / count

        profile_lines: list[str] = []
        if not args.no_profile:
            prof = copy_project(scratch / "profiled")
            if note:
                forget_code_versions(prof)
            derive_workloads(prof, args.profile_count)
            shutil.rmtree(base / CACHE_DIR, ignore_errors=True)
            shutil.copytree(base / "generated", prof / "generated", dirs_exist_ok=True)  # settled, as the base
            profile_lines = profiled_compile(prof, args.top, args.profile_count)

        lm = None
        if not args.no_lm_eval:
            import lm_eval_index
            try:
                lm = lm_eval_index.measure(count=count, runs=runs, builtin=args.lm_eval_builtin)
            except Exception as exc:  # a broken side venv must not hide lrc's figures
                print(f"(lm-eval measurement failed: {exc})")
                lm = None

        print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
        print(f"trees: base = repository specs/ + schemas/ + generated/; big = base + {count} workloads derived from "
              f"triage.ap-inbox (bench.w0001..bench.w{count:04d}, generated in {gen_s:.2f} s)")
        print(f"command: {' '.join(LRC)} compile --project <tree>  (both trees compiled once before: steady state, nothing written)")
        if note:
            print(note)
        print(f"lrc compile base tree, cold: median {b_med:.3f} s (runs: {fmt_runs(b_all)})")
        print(f"lrc compile big tree,  cold: median {g_med:.3f} s (runs: {fmt_runs(g_all)})")
        if cache:
            print(f"lrc compile base tree, warm ({CACHE_DIR}/ kept): median {bw_med:.3f} s (runs: {fmt_runs(bw_all)})")
            print(f"lrc compile big tree,  warm ({CACHE_DIR}/ kept): median {gw_med:.3f} s (runs: {fmt_runs(gw_all)})")
        else:
            print(f"warm: no {CACHE_DIR}/ appeared after a compile, so there is no warm figure")
        print(f"first compile of the big tree (records {count} new specs in the ledger, writes their snapshots; one run): "
              f"{first_s:.3f} s -> {(first_s - base_first_s) / count * 1e3:.3f} ms per spec")
        print()
        lm_ms = lm["per_yaml"] * 1e3 if lm else None
        ref_ms = lm_ms if lm_ms is not None else lm_eval_index_research()
        ref_label = "lm-eval measured here" if lm_ms is not None else "lm-eval research figure, not measured here"
        print(f"per spec, cold: {per_cold * 1e3:.3f} ms   goal <= {GOAL_MS} ms  -> "
              f"{'MET' if per_cold * 1e3 <= GOAL_MS else f'not met ({per_cold * 1e3 / GOAL_MS:.1f}x over)'}")
        if cache:
            print(f"per spec, warm: {per_warm * 1e3:.3f} ms   goal <= {GOAL_MS} ms  -> "
                  f"{'MET' if per_warm * 1e3 <= GOAL_MS else f'not met ({per_warm * 1e3 / GOAL_MS:.1f}x over)'}")
        if args.no_lm_eval:
            print(f"lm-eval: skipped (--no-lm-eval); research figure ≈ {ref_ms:.2f} ms per task YAML, not measured here")
        else:
            for line in lm_eval_index.report(lm):
                print(line)
        best = min(per_cold, per_warm) if cache else per_cold
        print(f"side by side: lrc {best * 1e3:.3f} ms per spec{' (warm)' if cache and per_warm < per_cold else ' (cold)'} vs "
              f"{ref_ms:.3f} ms per task YAML ({ref_label}); lm-eval / lrc = {ref_ms / (best * 1e3):.3f} "
              f"(the goal is >= 5; five times faster than this lm-eval figure would be <= {ref_ms / 5:.3f} ms per spec)")
        if profile_lines:
            print()
            print("where the time goes (compile pipeline stages; cProfile inflates every figure, compare the shares; "
                  f"ms/spec = stage time / {args.profile_count} generated specs, the project's fixed costs included):")
            for line in profile_lines:
                print(line)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def lm_eval_index_research() -> float:
    import lm_eval_index
    return lm_eval_index.RESEARCH_MS


if __name__ == "__main__":
    main()
