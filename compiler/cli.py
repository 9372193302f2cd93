"""The `lrc` command line.

Exit codes: 0 ok; 1 problems in specs or inputs the user can fix; 2 usage error;
3 a run ended incomplete (infrastructure failures exhausted their retries: run it again to
resume); 4 a plan.lock was refused (tampered, stale or foreign); 70 an internal error (a bug).
The compile path imports neither litellm nor polars nor the runtime: `execute` and `report`
import the runtime lazily.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_REFUSED, EXIT_INTERNAL = 0, 1, 2, 3, 4, 70


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lrc", description="LedgerRate compiler: finance-agent benchmarks as code.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("compile", help="validate specs and write generated/<edition>/plan.lock")
    c.add_argument("--check", action="store_true", help="write nothing; fail if generated/ is missing or stale (the pull-request gate)")
    c.add_argument("--format", choices=["text", "json", "github"], default="text")
    c.add_argument("--project", type=Path, help="project folder (default: the nearest folder with specs/ and schemas/)")

    b = sub.add_parser("bump", help="raise the version of a spec or code component, keeping the file's formatting")
    b.add_argument("ids", nargs="+", metavar="ID")
    b.add_argument("--format", choices=["text", "json", "github"], default="text")
    b.add_argument("--project", type=Path)

    e = sub.add_parser("execute", help="run a compiled plan.lock and report")
    e.add_argument("lock", type=Path, metavar="PLAN.lock")
    e.add_argument("--out", type=Path, required=True, help="output folder (journal, items, traces, cells, rate card); rerun to resume")
    e.add_argument("--seed-file", type=Path, help="the held-out seed of a held-out edition")
    e.add_argument("--no-progress", action="store_true")

    r = sub.add_parser("report", help="rebuild cells, traces and the rate card of a run folder from its journal")
    r.add_argument("lock", type=Path, metavar="PLAN.lock")
    r.add_argument("--out", type=Path, required=True)

    x = sub.add_parser("explain", help="long-form help for a diagnostic code")
    x.add_argument("code")
    return p


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
    from lrc.compiler.bump import bump
    from lrc.compiler.diagnostics import Diagnostics
    from lrc.compiler.printer import emit

    root = _project(args.project)
    diags = Diagnostics()
    done = []
    for ident in args.ids:
        res = bump(root, ident, diags)
        if res:
            done.append(res)
            if args.format == "text":
                print(f"{res.path}: {res.id} {res.old} -> {res.new}")
    emit(diags.sorted(), args.format, sys.stdout if args.format in ("json", "github") else sys.stderr,
         **({"command": "bump", "bumped": [vars(d) for d in done]} if args.format == "json" else {}))
    if done and args.format == "text":
        print("Update the references that pin the old version, then run `lrc compile`.")
    return EXIT_PROBLEMS if diags.has_errors else EXIT_OK


def _cmd_execute(args) -> int:
    from lrc.runtime.execute import run_cli

    return run_cli(args.lock, args.out, seed_file=args.seed_file, progress=not args.no_progress)


def _cmd_report(args) -> int:
    from lrc.runtime.execute import report_cli

    return report_cli(args.lock, args.out)


def _cmd_explain(args) -> int:
    from lrc.compiler.codes import CODES, explain

    text = explain(args.code)
    if text is None:
        print(f"lrc: unknown diagnostic code {args.code!r}; known codes: {', '.join(sorted(CODES))}", file=sys.stderr)
        return EXIT_USAGE
    print(text, end="")
    return EXIT_OK


COMMANDS = {"compile": _cmd_compile, "bump": _cmd_bump, "execute": _cmd_execute, "report": _cmd_report, "explain": _cmd_explain}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("lrc: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a traceback is a bug
        from lrc.compiler.pipeline import ProjectNotFound

        if isinstance(exc, ProjectNotFound):
            print(f"lrc: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if os.environ.get("LRC_TRACEBACK"):
            raise
        print(f"lrc: internal error (this is a bug in lrc): {type(exc).__name__}: {exc}\n"
              f"     rerun with LRC_TRACEBACK=1 to see where, and report it.", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
