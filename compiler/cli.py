"""The `lrc` command line.

Exit codes: 0 ok; 1 problems in specs or inputs the user can fix; 2 usage error;
3 a run ended incomplete (infrastructure failures exhausted their retries: run it again to
resume; a partial execute -- a subset, a limit or a shard -- that made every run it was asked to
make exits 0); 4 a plan.lock or output folder was refused (tampered, stale or foreign; for `merge`
also a folder that is not a run folder, or overlapping folders that disagree); 5 calibration
failed (`execute`/`report`: the oracle below n/n or the null model above 0 in some cell); 6 the
output folder is unusable (a file, read-only, disk full: fix it and rerun to resume); 7 the
`--budget` was reached (no further call started; a larger budget resumes); 8 the edition's window
(seed §3) has closed (no run started after it; `--outside-window` makes them); 70 an internal error (a bug).
`lrc package` exits 4 when it refuses a run folder (no journal or summary, another plan, code that
differs from the lock). `lrc verify` exits 1 when a recomputed value differs from the published one
(or cannot be recomputed), 4 when it refuses the archive (not a package, damaged or hostile).
`lrc review import` exits 1 when it refuses a workbook (another plan, a changed sample, edited
protected cells, missing or invalid grades): nothing is appended then. `lrc categorize` exits 1
for a missing folder, an unknown run key or a category not in the locked taxonomy (nothing appended).
`lrc regrade` exits 1 for an unknown erratum or an excluded item the folder does not hold, 4 when it
refuses the folder (another plan), the lock or the code (not the erratum's corrected code), 6 when
NEW_DIR is RUN_DIR or not a new, empty folder; 5 as `report` when calibration fails after the corrections.
`lrc publish` exits 4 when it refuses the run folder (partial, runs still excluded, calibration failed,
no outputs, another plan), the history (a foreign or damaged file) or a second publication of a plan
with other rows (the same rows again is a no-op, exit 0); 6 when the history folder, or the run
folder's outputs (rebuilt from its journal first), cannot be written.
`lrc report --history DIR` exits 4 for a foreign or damaged history, 6 when report.html cannot be written.
`lrc diff` follows Terraform's -detailed-exitcode: 0 nothing changed, 2 something changed,
1 error (spec errors, a bad ref or lock).
The compile path imports neither litellm nor polars nor the runtime: `execute`, `report`, `merge`,
`render`, `review`, `categorize`, `preregister`, `package`, `verify`, `regrade` and `publish` import the runtime lazily.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_REFUSED, EXIT_INTERNAL = 0, 1, 2, 3, 4, 70
EXIT_CHANGED = 2  # `lrc diff` only: something changed


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lrc", description="LedgerRate compiler: finance-agent benchmarks as code.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("compile", help="validate specs and write generated/<edition>/plan.lock")
    c.add_argument("--check", action="store_true", help="write nothing; fail if generated/ is missing or stale (the pull-request gate)")
    c.add_argument("--format", choices=["text", "json", "github"], default="text")
    c.add_argument("--project", type=Path, help="project folder (default: the nearest folder holding specs/)")

    b = sub.add_parser("bump", help="raise the version of a spec or code component, keeping the file's formatting")
    b.add_argument("ids", nargs="*", metavar="ID")
    b.add_argument("--all-required", action="store_true",
                   help="bump every spec and code component the version gate refuses for changed content (LRC5001/5003/5101/5103)")
    b.add_argument("--update-pins", action="store_true",
                   help="with --all-required: also rewrite the references that pin an older version, bump what that "
                        "changes, and repeat until nothing is left; prints every edit")
    b.add_argument("--format", choices=["text", "json", "github"], default="text")
    b.add_argument("--project", type=Path)

    d = sub.add_parser("diff", help="what changed per spec and code component, and which bumps are required (exit 0 none, 2 changes, 1 error)")
    d.add_argument("--against", default="HEAD", metavar="GIT_REF|OLD.lock",
                   help="a git ref (default HEAD: the working tree's uncommitted changes) or a plan.lock file")
    d.add_argument("--format", choices=["text", "json", "github"], default="text")
    d.add_argument("--project", type=Path)

    rd = sub.add_parser("render", help="print exactly the messages a run sends, from the lock")
    rd.add_argument("workload", metavar="WORKLOAD", help="workload ref (extract.invoice.v1) or id")
    rd.add_argument("--system", required=True, metavar="S", help="system key, e.g. single-shot or agentic")
    rd.add_argument("--edition", metavar="E", help="edition id (default: the only compiled edition, or demo)")
    rd.add_argument("--item", type=_index, metavar="N", help="generate item N (0-based) from the locked seed and render it")
    rd.add_argument("--model", metavar="M", help="model id (matters for file attachments; default: a text-input model)")
    rd.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition (with --item)")
    rd.add_argument("--format", choices=["text", "json", "github"], default="text")
    rd.add_argument("--project", type=Path)

    e = sub.add_parser("execute", help="run a compiled plan.lock and report")
    e.add_argument("lock", type=Path, metavar="PLAN.lock")
    e.add_argument("--out", type=Path, required=True, help="output folder (journal, items, traces, cells, rate card); rerun to resume")
    e.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")
    e.add_argument("--no-progress", action="store_true")
    e.add_argument("--profile", type=Path, metavar="RUN.yaml",
                   help="run profile: per-model endpoint, key variable and concurrency; retries, timeouts, deadlines "
                        "(schemas/run-profile.schema.json). Never part of the lock; flags win over it, it wins over LRC_* variables")
    e.add_argument("--max-concurrency", action="append", default=[], metavar="MODEL=N",
                   help="this model's concurrent requests in this execute (repeatable; default 4)")
    e.add_argument("--api-base", action="append", default=[], metavar="MODEL=URL",
                   help="this model's endpoint in this execute (repeatable; default: the provider's)")
    e.add_argument("--api-key-env", action="append", default=[], metavar="MODEL=VAR",
                   help="the NAME of the variable holding this model's key (repeatable; default: the provider's)")
    e.add_argument("--models", action="append", type=_id_list, metavar="M1,M2",
                   help="run only these models' runs (a smoke run: the folder is partial until completed)")
    e.add_argument("--workloads", action="append", type=_id_list, metavar="W1,W2",
                   help="run only these workloads' runs, by ref (triage.ap-inbox.v2) or id (triage.ap-inbox); partial")
    e.add_argument("--limit", type=_positive, metavar="N", help="run only the first N items (by index) of each cell; partial")
    e.add_argument("--shard", type=_shard, metavar="i/N",
                   help="run only shard i of N (a fixed partition of the runs by run key); combine the shards with `lrc merge`")
    e.add_argument("--cache", type=Path, metavar="DIR",
                   help="a response cache shared across output folders and plans: identical requests of earlier runs "
                        "are answered from it without a call (temperature 0 only; created if missing)")
    e.add_argument("--cache-sampled", action="store_true",
                   help="with --cache: also reuse responses of sampled models (temperature > 0 or none given)")
    e.add_argument("--budget", type=_usd, metavar="USD",
                   help="never start a call that could take the total spent in this folder above USD (exit 7 when reached; "
                        "a larger budget resumes)")
    e.add_argument("--outside-window", action="store_true",
                   help="make runs even after the edition's window (window_hours from this folder's first execute, "
                        "seed §3) closed; each is journaled as outside the window and the rate card counts them "
                        "(without it: exit 8, no run starts after the close)")

    m = sub.add_parser("merge", help="combine shard folders of one plan into one run folder (journal, items, every output)")
    m.add_argument("lock", type=Path, metavar="PLAN.lock",
                   help="the plan the folders were run with; may be left out (`lrc merge FOLDER FOLDER... --out DIR`): "
                        "then it is found as `lrc report RUN_DIR` finds it, generated/<edition>/plan.lock above the working directory")
    m.add_argument("folders", type=Path, nargs="*", metavar="FOLDER", help="run folders of that plan (`lrc execute --out`)")
    m.add_argument("--out", type=Path, required=True, help="the merged folder: new, or one of the FOLDERs")
    m.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")

    es = sub.add_parser("estimate", help="the cost range of the full edition per cell and in total, before any call")
    es.add_argument("lock", type=Path, metavar="PLAN.lock")
    es.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition (its items are counted)")
    es.add_argument("--profile", type=Path, metavar="RUN.yaml", help="a run profile, checked as `lrc execute` checks it (operating settings: they change no forecast figure)")
    es.add_argument("--format", choices=["text", "json"], default="text")

    r = sub.add_parser("report", help="rebuild cells, traces, the rate card and report.html of a run folder from its journal")
    r.add_argument("lock", type=Path, metavar="PLAN.lock|RUN_DIR",
                   help="the edition's plan.lock (with --out RUN_DIR), or a run folder (its lock: generated/<edition>/plan.lock above here)")
    r.add_argument("--out", type=Path, metavar="RUN_DIR", help="the `lrc execute --out` folder to rebuild")
    r.add_argument("--html", action="store_true",
                   help="print the path of RUN_DIR/report.html (always written); with a lock and no run folder: the "
                        "pre-registration page from the lock alone, every result 'not run' (printed, or written to --html-out)")
    r.add_argument("--html-out", type=Path, metavar="FILE", help="with --html and no run folder: write the pre-registration page here")
    r.add_argument("--history", type=Path, metavar="DIR",
                   help="with a run folder: add the 'Trend across editions' section (CPO per workload version across the "
                        "editions published to DIR by `lrc publish`) to RUN_DIR/report.html")

    pg = sub.add_parser("preregister", help="the reliability report's template from the lock alone, every result 'not run' (tasks)")
    pg.add_argument("lock", type=Path, metavar="PLAN.lock")
    pg.add_argument("--out", type=Path, help="write the page here (default: print it)")

    rv = sub.add_parser("review", help="human spot-check of judged runs in an xlsx workbook (export, then import the grades)")
    rv_sub = rv.add_subparsers(dest="review_command", required=True, metavar="SUBCOMMAND")
    rx = rv_sub.add_parser("export", help="write the seeded spot-check sample (or a whole cell, --all) as a review workbook")
    rx.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `lrc execute --out` folder")
    rx.add_argument("--out", type=Path, required=True, metavar="REVIEW.xlsx", help="the workbook to write")
    rx.add_argument("--all", dest="cell", metavar="CELL",
                    help='export every judged run of one cell for a manual regrade; CELL is "WORKLOAD|MODEL|SYSTEM", '
                         'e.g. "generate.variance-commentary.v1|openai/gpt-4o|single-shot" (quote it: | is a shell pipe)')
    rx.add_argument("--plan", type=Path, metavar="PLAN.lock",
                    help="the lock RUN_DIR was run with (default: generated/<edition>/plan.lock of the edition in its journal)")
    rx.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")
    ri = rv_sub.add_parser("import", help="append the workbook's human grades to RUN_DIR's journal and report disagreement per cell")
    ri.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    ri.add_argument("workbook", type=Path, metavar="REVIEW.xlsx")
    ri.add_argument("--plan", type=Path, metavar="PLAN.lock", help="as for export")
    ri.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")

    cg = sub.add_parser("categorize", help="append a reviewer's failure categories for one run (never rewriting the run or its derived categories)")
    cg.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `lrc execute --out` folder")
    cg.add_argument("--run", required=True, metavar="KEY", help='the run key, "WORKLOAD|MODEL|SYSTEM|ITEM|rN" (quote it: | is a shell pipe)')
    cg.add_argument("--primary", required=True, metavar="C", help="a primary category of the taxonomy locked in the run's plan")
    cg.add_argument("--secondary", action="append", default=[], metavar="C", help="a secondary category (repeat for several)")
    cg.add_argument("--note", required=True, help="why: kept with the assignment")
    cg.add_argument("--reviewer", metavar="NAME", help="who assigned it")
    cg.add_argument("--plan", type=Path, metavar="PLAN.lock", help="the lock RUN_DIR was run with (default: generated/<edition>/plan.lock)")
    pk = sub.add_parser("package", help="a deterministic reproducibility package (tar.gz) of a published run folder")
    pk.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `lrc execute --out` folder")
    pk.add_argument("--out", type=Path, required=True, metavar="PKG.tar.gz", help="the package to write")
    pk.add_argument("--plan", type=Path, metavar="PLAN.lock",
                    help="the lock RUN_DIR was run with (default: generated/<edition>/plan.lock of the edition in its journal)")
    pk.add_argument("--released-seed", type=Path, metavar="SEED_FILE",
                    help="a held-out edition's seed, ONLY once the edition closed and the seed is released: checked against "
                         "the commitment and packed (without it a held-out package holds no seed)")

    rg = sub.add_parser("regrade", help="apply a published erratum: re-grade a run folder's stored outputs into a new folder, no model call")
    rg.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `lrc execute --out` folder of the plan the erratum corrects (never modified)")
    rg.add_argument("--erratum", required=True, metavar="ID", help="the erratum id, compiled to generated/errata/ID.json by `lrc compile`")
    rg.add_argument("--out", type=Path, required=True, metavar="NEW_DIR", help="the regraded folder to write (new or empty)")
    rg.add_argument("--plan", type=Path, metavar="PLAN.lock",
                    help="the lock RUN_DIR was run with (default: generated/<edition>/plan.lock of the edition in its journal)")
    rg.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")

    pb = sub.add_parser("publish", help="append a finished run folder's cells to a results history (append-only parquet, one file per edition)")
    pb.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="an `lrc execute --out` folder holding every planned run (never a partial one)")
    pb.add_argument("--history", type=Path, required=True, metavar="DIR",
                    help="the history folder: DIR/<edition>-<plan digest prefix>.parquet per published edition (created if absent)")
    pb.add_argument("--plan", type=Path, metavar="PLAN.lock",
                    help="the lock RUN_DIR was run with (default: generated/<edition>/plan.lock of the edition in its journal)")
    pb.add_argument("--seed-file", type=Path,
                    help="the held-out seed of a held-out edition: the folder's outputs are rebuilt from its journal before publishing")

    vf = sub.add_parser("verify", help="recompute every published number of a reproducibility package offline and compare")
    vf.add_argument("package", type=Path, metavar="PKG.tar.gz")
    vf.add_argument("--seed-file", type=Path, help="a held-out edition's released seed, when the package does not hold it")

    x = sub.add_parser("explain", help="long-form help for a diagnostic code, with an example; --list for every code")
    x.add_argument("code", nargs="?", help="a code such as LRC5001 (without it: the list of codes)")
    x.add_argument("--list", action="store_true", help="every code with its title, grouped by range")

    sd = sub.add_parser("seed", help="held-out seeds")
    sd_sub = sd.add_subparsers(dest="seed_command", required=True, metavar="SUBCOMMAND")
    sn = sd_sub.add_parser("new", help="write a fresh held-out seed file and print its commitment for the edition")
    sn.add_argument("name", nargs="?", default="held-out", help="file name under seeds/ (default: held-out)")
    sn.add_argument("--out", type=Path, metavar="PATH", help="where to write the seed (default: seeds/<name>.seed in the project)")
    sn.add_argument("--project", type=Path)

    pr = sub.add_parser("pricing", help="pricing helpers")
    pr_sub = pr.add_subparsers(dest="pricing_command", required=True, metavar="SUBCOMMAND")
    ps = pr_sub.add_parser("snapshot", help="a pricing block prefilled offline from litellm's bundled cost map, to review and paste")
    ps.add_argument("models", nargs="+", metavar="MODEL")
    ps.add_argument("--as-of", type=_date, metavar="YYYY-MM-DD", help="the as_of date to write (default: today, UTC)")
    return p


def _id_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not names or any(not n for n in names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of ids, got {text!r}")
    return names


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, got {value}")
    return value


def _shard(text: str) -> tuple[int, int]:
    import re

    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if found is None or not 1 <= int(found[1]) <= int(found[2]):
        raise argparse.ArgumentTypeError(f"expected i/N with 1 <= i <= N (e.g. 2/3), got {text!r}")
    return int(found[1]), int(found[2])


def _index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an item index: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("item indexes start at 0")
    return value


def _usd(text: str) -> str:
    """A --budget amount: a plain decimal number of USD, zero or more (kept as text: Decimal downstream)."""
    import re

    if not re.fullmatch(r"\$?\d+(\.\d+)?", text.strip()):
        raise argparse.ArgumentTypeError(f"not an amount of USD (e.g. 25 or 12.50): {text!r}")
    return text.strip().lstrip("$")


def _date(text: str) -> str:
    import datetime as _dt
    import re

    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return _dt.date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}")


def _project(arg: Path | None) -> Path:
    from lrc.compiler.pipeline import find_root

    return find_root(arg if arg is not None else Path.cwd())


def _cmd_compile(args) -> int:
    from lrc.compiler.pipeline import compile_project
    from lrc.compiler.printer import emit

    root = _project(args.project)
    result = compile_project(root, check=args.check)
    diags = result.diagnostics.sorted()
    extra = {}
    if args.format == "json":
        extra = {"command": "compile", "check": args.check, "ok": not result.diagnostics.has_errors,
                 "changed": result.changed, "locks": {k: v["root_digest"] for k, v in sorted(result.locks.items())}}
    emit(diags, args.format, sys.stdout if args.format in ("json", "github") else sys.stderr, **extra)
    if result.diagnostics.has_errors:
        if args.format == "text":
            n = sum(d.severity == "error" for d in diags)
            print(f"lrc compile: {n} error(s); nothing written." if not args.check else f"lrc compile --check: {n} problem(s).", file=sys.stderr)
        return EXIT_PROBLEMS
    if args.format == "text":
        for edition, lock in sorted(result.locks.items()):
            print(f"generated/{edition}/plan.lock  {lock['root_digest']}")
        if args.check:
            print("lrc compile --check: generated/ is up to date.")
        else:
            print(f"{len(result.changed)} file(s) written." if result.changed else "generated/ was already up to date.")
    return EXIT_OK


def _cmd_bump(args) -> int:
    from lrc.compiler.bump import bump, bump_all_required
    from lrc.compiler.diagnostics import Diagnostics
    from lrc.compiler.printer import emit

    if args.all_required and args.ids:
        print("lrc bump: give IDs or --all-required, not both", file=sys.stderr)
        return EXIT_USAGE
    if not args.all_required and not args.ids:
        print("lrc bump: name the spec or code component ids to bump, or pass --all-required", file=sys.stderr)
        return EXIT_USAGE
    if args.update_pins and not args.all_required:
        print("lrc bump: --update-pins goes with --all-required", file=sys.stderr)
        return EXIT_USAGE
    root = _project(args.project)
    diags = Diagnostics()
    done, pins = [], []
    if args.update_pins:
        return _bump_update_pins(root, args, diags)
    if args.all_required:
        done, pins = bump_all_required(root, diags)
    else:
        for ident in args.ids:
            res = bump(root, ident, diags)
            if res:
                done.append(res)
    if args.format == "text":
        for res in done:
            print(f"{res.path}: {res.id} {res.old} -> {res.new}")
    if args.format == "json":
        emit(diags.sorted(), "json", sys.stdout, command="bump", ok=not diags.has_errors, all_required=args.all_required,
             bumped=[_bumped_json(d) for d in done], pins=[vars(p) for p in pins])
    elif args.format == "github":
        emit(diags.sorted(), "github", sys.stdout)
        for p in pins:
            print(f"::warning file={p.path},line={p.line},col={p.column},title=stale pin::{p.owner} pins {p.old}; "
                  f"update it to {p.new} by hand")
    else:
        emit(diags.sorted(), "text", sys.stderr)
        if args.all_required and not done and not diags.has_errors:
            print("Nothing to bump: no spec or code component changed at a recorded version.")
        if pins:
            print("\nThese references pin the old versions; update them by hand (lrc never edits a pin):")
            for p in pins:
                print(f"  {p.path}:{p.line}:{p.column}: {p.owner} pins {p.old} at {p.pointer} -> write {p.new}")
        if done:
            print("Update the references that pin the old version, then run `lrc compile`"
                  + ("; an edition or workload whose pins you change needs a bump too (`lrc bump --all-required` again)."
                     if args.all_required else "."))
    return EXIT_PROBLEMS if diags.has_errors else EXIT_OK


def _bumped_json(b) -> dict:
    return {"path": b.path, "id": b.id, "old": b.old, "new": b.new}  # the line is in `edits` (--update-pins)


def _bump_update_pins(root: Path, args, diags) -> int:
    from lrc.compiler.bump import bump_and_update_pins
    from lrc.compiler.printer import _gh_escape, emit

    done, edits = bump_and_update_pins(root, diags)
    if args.format == "json":
        emit(diags.sorted(), "json", sys.stdout, command="bump", ok=not diags.has_errors, all_required=True,
             update_pins=True, bumped=[_bumped_json(d) for d in done], pins=[], edits=[vars(e) for e in edits])
    elif args.format == "github":
        emit(diags.sorted(), "github", sys.stdout)
        for e in edits:
            print(f"::notice file={_gh_escape(e.path, True)},line={e.line},col={e.column},title=lrc bump::"
                  + _gh_escape(f"{e.owner}: {e.old} → {e.new}"))
    else:
        emit(diags.sorted(), "text", sys.stderr)
        for e in edits:
            print(f"{e.path}:{e.line}: {e.old} → {e.new}")
        if not edits and not diags.has_errors:
            print("Nothing to bump: no spec or code component changed at a recorded version, and no pin is stale.")
        elif edits and not diags.has_errors:
            print(f"{len(edits)} edit(s) in {len({e.path for e in edits})} file(s); now run `lrc compile`.")
    return EXIT_PROBLEMS if diags.has_errors else EXIT_OK


def _cmd_diff(args) -> int:
    from lrc.compiler import diff
    from lrc.compiler.printer import emit, github

    root = _project(args.project)
    result = diff.run(root, args.against)
    diags = result.diagnostics.sorted()
    if args.format == "json":
        emit(diags, "json", sys.stdout, **diff.as_json(result))
    elif args.format == "github":
        sys.stdout.write(github(diags))
        if result.error and not result.error_code:  # a coded failure is already among the diagnostics
            print(f"::error title=lrc diff::{result.error}")
        elif not result.error:
            sys.stdout.write(diff.github(result))
    else:
        emit(diags, "text", sys.stderr)
        if result.error and not result.error_code:
            print(f"lrc diff: {result.error}", file=sys.stderr)
        elif not result.error:
            sys.stdout.write(diff.text(result))
    if result.failed:
        return EXIT_PROBLEMS
    return EXIT_CHANGED if result.changes else EXIT_OK


def _cmd_render(args) -> int:
    import json

    from lrc.compiler import render_cmd
    from lrc.compiler.printer import FORMAT_VERSION

    root = _project(args.project)
    try:
        rendered = render_cmd.render(root, args.workload, args.system, edition=args.edition, item=args.item,
                                     model=args.model, seed_file=args.seed_file)
    except render_cmd.RenderFailed as exc:
        from lrc.compiler.diagnostics import Diagnostic
        from lrc.compiler.printer import emit

        diag = Diagnostic(exc.code, "error", exc.message, hint=exc.hint)
        if args.format == "json":
            emit([diag], "json", sys.stdout, command="render", ok=False, error=exc.message)
        else:
            emit([diag], args.format, sys.stdout if args.format == "github" else sys.stderr)
        return exc.exit_code
    if args.format == "json":
        doc = {"format_version": FORMAT_VERSION, "diagnostics": [], **rendered.to_json()}
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_cmd.text(rendered))
    return EXIT_OK


def _cmd_execute(args) -> int:
    if (refused := _not_a_lock(args.lock, "execute")) is not None:
        return refused
    operating = _operating_request(args)
    if operating is None:
        return EXIT_PROBLEMS
    from lrc.runtime.execute import run_cli

    def flat(lists):
        return None if lists is None else [name for names in lists for name in names]

    return run_cli(args.lock, args.out, {"seed_file": args.seed_file, "progress": not args.no_progress, **operating,
                                         "models": flat(args.models), "workloads": flat(args.workloads),
                                         "limit": args.limit, "shard": args.shard,
                                         "cache_dir": args.cache, "cache_sampled": args.cache_sampled,
                                         "budget": args.budget, "outside_window": args.outside_window})


def _operating_request(args, command: str = "execute") -> dict | None:
    """The run profile and the per-model operating flags, checked like a spec (file:line:col,
    code, hint) against the plan's models; None (diagnostics printed) when they cannot be used.
    `lrc estimate --profile` checks its profile the same way, though no forecast figure reads it."""
    from lrc.compiler import profile
    from lrc.compiler.diagnostics import Diagnostics
    from lrc.compiler.printer import emit

    # The flags' argparse names are the settings they set (`lrc estimate` has none of them).
    flags = {flag: getattr(args, setting, None) or [] for flag, setting in profile.FLAGS.items()}
    if args.profile is None and not any(flags.values()):
        return {"profile": None, "profile_path": None, "endpoint_flags": {}}
    diags = Diagnostics()
    models = _plan_models(args.lock)
    embedded = [m for m, entry in (models or {}).items() if isinstance(entry, dict) and entry.get("reference")]
    checked = profile.check(args.profile, _shown(args.profile) if args.profile is not None else None, flags,
                            None if models is None else sorted(models), diags, embedded=embedded)
    if checked is None:
        emit(diags.sorted(), "text", sys.stderr)
        nothing = "nothing was run" if command == "execute" else "nothing was estimated"
        print(f"lrc {command}: {sum(d.severity == 'error' for d in diags.items)} problem(s) in the operating settings; {nothing}.",
              file=sys.stderr)
        return None
    emit(diags.sorted(), "text", sys.stderr)  # warnings, if any
    # The profile's path is recorded as the operator gave it (the run's operating record).
    return {"profile": checked["profile"], "profile_path": None if args.profile is None else str(args.profile),
            "endpoint_flags": checked["flags"]}


def _plan_models(lock: Path) -> dict[str, Any] | None:
    """The models of a plan.lock (id -> its entry; `reference` marks an embedded one), to check
    a profile's and the flags' models against; None when the lock cannot be read (the runtime
    then refuses it, or checks the models itself)."""
    from lrc.runtime.lock import format as lockformat

    try:
        data = lockformat.loads(lock.read_bytes())
        from lrc.runtime.lock.judges import callable_models  # the plan's models and its judges

        return dict(callable_models(data["plan"]))
    except Exception:  # noqa: BLE001 - the lock's own problems are the runtime's to report (exit 4)
        return None


def _cmd_merge(args) -> int:
    lock, folders = args.lock, list(args.folders)
    if lock.is_dir() and (lock / "journal.jsonl").is_file():  # `lrc merge FOLDER FOLDER... --out DIR`
        from lrc.runtime.execute import EXIT_REFUSED as refused_exit, Refused, _say
        from lrc.runtime.review.cli import locate_plan

        try:
            lock = locate_plan(args.lock, None, advice="give the lock the folders were run with first: "
                                                       "`lrc merge PLAN.lock FOLDER... --out DIR`")
            folders = [args.lock, *folders]
        except Refused as exc:
            _say(f"lrc merge: {exc}")
            return refused_exit
    elif (refused := _not_a_lock(lock, "merge")) is not None:
        return refused
    if not folders:
        print("lrc merge: give the run folders to combine (`lrc merge [PLAN.lock] FOLDER [FOLDER ...] --out DIR`)", file=sys.stderr)
        return EXIT_USAGE
    from lrc.runtime.execute import merge_cli

    return merge_cli(lock, folders, args.out, seed_file=args.seed_file)


def _cmd_estimate(args) -> int:
    if (refused := _not_a_lock(args.lock, "estimate")) is not None:
        return refused
    if args.profile is not None and _operating_request(args, "estimate") is None:  # checked as execute checks it
        return EXIT_PROBLEMS
    from lrc.runtime.execute import estimate_cli

    return estimate_cli(args.lock, {"seed_file": args.seed_file, "format": args.format, "profile_path": args.profile})


def _cmd_report(args) -> int:
    lock, out = args.lock, args.out
    if out is None and lock.is_dir() and (lock / "journal.jsonl").is_file():  # `lrc report RUN_DIR`
        from lrc.runtime.execute import EXIT_REFUSED as refused_exit, Refused, _say
        from lrc.runtime.review.cli import locate_plan

        try:
            lock, out = locate_plan(args.lock, None), args.lock
        except Refused as exc:
            _say(f"lrc report: {exc}")
            return refused_exit
    if args.html_out is not None and (out is not None or not args.html):
        print("lrc report: --html-out is for the pre-registration page (--html with no run folder); a run folder's page is "
              "RUN_DIR/report.html", file=sys.stderr)
        return EXIT_USAGE
    if out is None and not args.html:
        print("lrc report: give the run folder (--out RUN_DIR, or RUN_DIR in place of the lock), or --html for the "
              "pre-registration page from the lock alone", file=sys.stderr)
        return EXIT_USAGE
    if args.history is not None and out is None:
        print("lrc report: --history draws the trend on a run folder's page; give the run folder (RUN_DIR, or --out RUN_DIR)",
              file=sys.stderr)
        return EXIT_USAGE
    if (refused := _not_a_lock(lock, "report")) is not None:
        return refused
    from lrc.runtime.execute import report_cli

    return report_cli(lock, out, html=args.html, html_out=args.html_out, history=args.history)


def _cmd_preregister(args) -> int:
    if (refused := _not_a_lock(args.lock, "preregister")) is not None:
        return refused
    from lrc.runtime.preregister import preregister_cli

    return preregister_cli(args.lock, args.out)


def _cmd_review(args) -> int:
    from lrc.runtime.review.cli import export_cli, import_cli

    if args.review_command == "export":
        return export_cli(args.run_dir, args.out, plan_path=args.plan, seed_file=args.seed_file, cell=args.cell)
    return import_cli(args.run_dir, args.workbook, plan_path=args.plan, seed_file=args.seed_file)


def _cmd_categorize(args) -> int:
    from lrc.runtime.review.categorize import categorize_cli

    return categorize_cli(args.run_dir, args.run, args.primary, args.secondary, args.note, args.reviewer, plan_path=args.plan)
def _cmd_package(args) -> int:
    from lrc.runtime.publish.package import package_cli

    return package_cli(args.run_dir, args.out, plan_path=args.plan, seed_file=args.released_seed)


def _cmd_regrade(args) -> int:
    from lrc.runtime.errata import regrade_cli

    return regrade_cli(args.run_dir, args.erratum, args.out, plan_path=args.plan, seed_file=args.seed_file)


def _cmd_publish(args) -> int:
    from lrc.runtime.publish.publish_cli import publish_cli

    return publish_cli(args.run_dir, args.history, plan_path=args.plan, seed_file=args.seed_file)


def _cmd_verify(args) -> int:
    from lrc.runtime.publish.verify_package import verify_cli

    return verify_cli(args.package, seed_file=args.seed_file)


def _shown(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if Path(rel).parts[:3].count("..") < 3 else str(path.resolve())  # up to ../../: the path to type here


def _not_a_lock(path: Path, command: str) -> int | None:
    """A spec (or a folder) given where `execute`/`report` take a plan.lock: say which lock to
    pass, or that `lrc compile` comes first (LRC8301, exit 2: a usage error). None otherwise;
    whatever else is wrong with the file is the lock verifier's to say (exit 4)."""
    import re

    from lrc.compiler.diagnostics import Diagnostic
    from lrc.compiler.printer import emit

    if path.is_dir():
        lock = path / "plan.lock"
        what, edition, root = f"{_shown(path)} is a folder", None, None
    else:
        from lrc.runtime import filebytes

        try:  # without blocking: a FIFO given as the lock is the lock loader's to refuse, never waited on
            fd, _ = filebytes.open_regular(path, None)
            try:
                head = os.read(fd, 65536)
            finally:
                os.close(fd)
        except OSError:
            return None  # missing, unreadable or not a regular file: the lock loader words it
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
        kind = re.search(r"(?m)^kind:[ \t]*['\"]?([A-Za-z-]+)", text)
        if text.lstrip().startswith("{") or not (kind or path.suffix.lower() in (".yaml", ".yml")):
            return None
        ident = re.search(r"(?m)^id:[ \t]*['\"]?([A-Za-z0-9._-]+)", text)
        what = f"{_shown(path)} is {('an ' if kind and kind[1][0] in 'aeiou' else 'a ') + kind[1] if kind else 'a YAML file'} spec, not a plan.lock"
        edition = ident[1] if kind and kind[1] == "edition" and ident else None
        root = _project_of(path)
        lock = root / "generated" / edition / "plan.lock" if root is not None and edition else None
    locks = sorted((root / "generated").glob("*/plan.lock")) if root is not None else []
    if lock is not None and lock.is_file():
        summary, hint = f"{what}; pass its lock: {_shown(lock)}", f"lrc {command} {_shown(lock)} --out ..."
    elif edition is not None:
        summary = f"{what}, and edition {edition} is not compiled yet"
        hint = f"run `lrc compile` first; it writes {_shown(lock) if lock is not None else f'generated/{edition}/plan.lock'}"
    else:
        summary = f"{what}; `lrc {command}` takes an edition's generated/<edition>/plan.lock"
        hint = ("compiled locks: " + ", ".join(_shown(p) for p in locks)) if locks else "run `lrc compile` first; it writes generated/<edition>/plan.lock"
    emit([Diagnostic("LRC8301", "error", summary, hint=hint)], "text", sys.stderr)
    return EXIT_USAGE


def _project_of(path: Path) -> Path | None:
    from lrc.compiler.pipeline import ProjectNotFound, find_root

    try:
        return find_root(path.resolve().parent)
    except (ProjectNotFound, OSError):
        return None


def _cmd_seed(args) -> int:
    from lrc.compiler.pipeline import ProjectNotFound, find_root
    from lrc.compiler.seeds import new_seed

    if args.out is not None:
        path = args.out
    else:
        if "/" in args.name or args.name in (".", "..") or not args.name:
            print(f"lrc seed new: {args.name!r} is not a file name; use --out PATH for another place", file=sys.stderr)
            return EXIT_USAGE
        try:
            base = find_root(args.project if args.project is not None else Path.cwd())
        except ProjectNotFound:
            base = args.project if args.project is not None else Path.cwd()
        path = base / "seeds" / f"{args.name}.seed"
    shown = os.path.relpath(path) if not Path(os.path.relpath(path)).as_posix().startswith("../..") else str(path)
    try:
        commitment = new_seed(path)
    except FileExistsError:
        print(f"lrc seed new: {shown} already exists; refusing to overwrite a seed (choose another name or --out)", file=sys.stderr)
        return EXIT_PROBLEMS
    except OSError as exc:
        print(f"lrc seed new: cannot write {shown}: {exc.strerror}", file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"wrote the held-out seed to {shown} (readable by you only)")
    print("paste this into the edition:")
    print(f"seed: {{policy: held-out, commitment: {commitment}}}")
    print(f"warning: never commit {shown}. Keep it private until the edition closes, then publish it so anyone "
          f"can check it against the commitment; `lrc execute --seed-file {shown}` needs it.", file=sys.stderr)
    ignored = _git_ignored(path)
    if ignored is False:
        print(f"warning: git does NOT ignore {shown} here: add `*.seed` to .gitignore before anything else", file=sys.stderr)
    elif ignored:
        print(f"note: git ignores {shown} here (`*.seed` is gitignored); keep it that way", file=sys.stderr)
    return EXIT_OK


def _git_ignored(path: Path) -> bool | None:
    """Whether git ignores `path`; None outside a git work tree (or without git)."""
    import subprocess

    try:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=path.parent, capture_output=True, text=True, timeout=30)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        res = subprocess.run(["git", "check-ignore", "-q", "--", path.name], cwd=path.parent, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.returncode == 0


def _cmd_pricing(args) -> int:
    import json

    from lrc.compiler import pricing_snapshot as ps

    try:
        block, problems = ps.snapshot(args.models, as_of=args.as_of)
        table = json.loads(ps._map_path().read_bytes())
    except ps.SnapshotError as exc:
        print(f"lrc pricing snapshot: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    missing = [m for m in args.models if ps.lookup(m, table) is None]
    if len(missing) < len(args.models):
        sys.stdout.write(block)
    for problem in problems:
        print(f"lrc pricing snapshot: {problem}", file=sys.stderr)
    return EXIT_PROBLEMS if missing else EXIT_OK


def _cmd_explain(args) -> int:
    from lrc.compiler.codes import CODES, explain, listing

    if args.list or args.code is None:
        if args.code is not None:
            print("lrc explain: give a CODE or --list, not both", file=sys.stderr)
            return EXIT_USAGE
        print(listing(), end="")
        return EXIT_OK
    text = explain(args.code)
    if text is None:
        print(f"lrc: unknown diagnostic code {args.code!r}; known codes: {', '.join(sorted(CODES))}", file=sys.stderr)
        return EXIT_USAGE
    print(text, end="")
    return EXIT_OK


COMMANDS = {"compile": _cmd_compile, "bump": _cmd_bump, "diff": _cmd_diff, "render": _cmd_render, "execute": _cmd_execute,
            "estimate": _cmd_estimate, "report": _cmd_report, "preregister": _cmd_preregister, "merge": _cmd_merge,
            "explain": _cmd_explain, "seed": _cmd_seed, "pricing": _cmd_pricing, "review": _cmd_review,
            "categorize": _cmd_categorize, "package": _cmd_package, "verify": _cmd_verify, "regrade": _cmd_regrade,
            "publish": _cmd_publish}


def _not_utf8(argv: list[str]) -> str | None:
    """The first command-line argument that is not UTF-8 text (bytes Python decoded as lone
    surrogates), shown escaped; None when all are. Such text reached the journal (a `--note` of
    `lrc categorize`, an `--api-base` in a session record) and every later report of the folder
    ended in an internal error: it is refused before anything runs."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")[:200]
    return None


_PATH_ERRNOS = {errno.ENAMETOOLONG: "a file name is too long", errno.ELOOP: "a path goes round a loop of symbolic links"}


def main(argv: list[str] | None = None) -> int:
    bad = _not_utf8(sys.argv[1:] if argv is None else argv)
    if bad is not None:
        print(f"lrc: an argument is not UTF-8 text: {bad!r}; lrc takes UTF-8 text and file names", file=sys.stderr)
        return EXIT_USAGE
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("lrc: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if exc.errno not in _PATH_ERRNOS:
            return _internal(exc)
        # A path given on the command line that no file can have: the user's to fix, not a bug.
        where = f": {exc.filename}"[:300] if exc.filename else ""
        print(f"lrc: {_PATH_ERRNOS[exc.errno]}{where}; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:
        if "Symlink loop" not in str(exc):  # pathlib's resolve(strict=False) of a loop
            return _internal(exc)
        print(f"lrc: {_PATH_ERRNOS[errno.ELOOP]} ({str(exc)[:300]}); nothing was written", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a traceback is a bug
        from lrc.compiler.pipeline import ProjectNotFound

        if isinstance(exc, ProjectNotFound):
            print(f"lrc: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    if os.environ.get("LRC_TRACEBACK"):
        raise exc
    from lrc.runtime.redact import build_redactor  # an exception's text may hold an echoed API key

    detail = build_redactor()(f"{type(exc).__name__}: {exc}")[:2000]
    print(f"lrc: internal error (this is a bug in lrc): {detail}\n"
          f"     rerun with LRC_TRACEBACK=1 to see where, and report it.", file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
