"""`lrc preregister PLAN.lock [--out FILE]`: seed 000's reliability report before any run.

Why its own module, outside `lrc.runtime.report`: the page itself is built by
`lrc.runtime.report.reliability` (part of the fingerprinted analysis code); this command only
verifies the lock and writes the page, and keeping it apart keeps the command's imports (the
executor's lock loading) out of the analysis fingerprint.
"""

from __future__ import annotations

from pathlib import Path

from lrc.runtime.report.reliability import data, markdown


def preregister_cli(lock_path: Path, out: Path | None) -> int:
    """`lrc preregister PLAN.lock [--out FILE]`: the reliability report's template from the lock
    alone, every result field "not run". The lock is verified first (a page of a tampered or
    stale lock would pre-register something else than what will run)."""
    from lrc.runtime.execute import EXIT_OK, EXIT_REFUSED, EXIT_UNUSABLE, Refused, _say, load_verified  # noqa: PLC0415 - only when run

    try:
        lock = load_verified(lock_path)
    except Refused as exc:
        _say(f"lrc preregister: {exc}")
        return EXIT_REFUSED
    plan = lock["plan"]
    if not plan.get("tasks"):
        _say(f"lrc preregister: edition {plan['edition']['ref']} has no tasks: the reliability report covers seed-000 tasks")
        return EXIT_REFUSED
    page = markdown(data(plan, None)) + f"\nplan.lock root digest: `{lock['root_digest']}`\n"
    if out is None:
        print(page, end="")
        return EXIT_OK
    try:
        from lrc.runtime import filebytes

        filebytes.put_output(out, page.encode("utf-8"), inputs=(lock_path,))  # never the lock, a link, a device or FIFO
    except OSError as exc:
        _say(f"lrc preregister: cannot write {out}: {exc.strerror or exc}")
        return EXIT_UNUSABLE  # as `lrc report --html-out`: the output place is unusable, the lock was fine
    print(f"pre-registration page written to {out}")
    return EXIT_OK
