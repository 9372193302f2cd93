"""Step 1 of `lrc execute`: refuse any lock that is not exactly what runs.

The lock's content was checked when it was read (`format.loads`, `lrc.runtime.lock.shape`):
a lock is untrusted input whatever its digests say, since anyone can recompute them. Checks,
in order: the lock's own digests (a tampered lock names the section that differs), the lrc
release that compiled it, the templating settings, and every code fingerprint against the
code running now (a stale lock names the component and the files that changed), for the
module the running code declares the component in (never another module the lock names).
Nothing is recompiled from specs/: the lock is the plan.
"""

from __future__ import annotations

from typing import Any

from lrc.runtime.lock import codeprint, factmemo
from lrc.runtime.lock.format import LRC_VERSION, verify_digests
from lrc.runtime.lock.shape import same
from lrc.runtime.lock.templating import SETTINGS


def verify(lock: dict[str, Any]) -> list[str]:
    problems = verify_digests(lock)
    if problems:
        return ["the lock was modified after compilation:"] + [f"  {p}" for p in problems]
    if lock["lrc_version"] != LRC_VERSION:
        problems.append(f"the lock was compiled by lrc {lock['lrc_version']}; this is lrc {LRC_VERSION}. "
                        f"Run it with the lrc release it was compiled with (each edition is tagged).")
    plan = lock["plan"]
    if not same(plan.get("templating"), SETTINGS):  # as JSON: true is not 1
        problems.append("the lock's prompt templating settings differ from this lrc's; recompile with this release")
    # What fingerprinting derives from each file's bytes is remembered (sealed, per user) under
    # the sha256 of those bytes: an edited file is recomputed and refused as ever (factmemo).
    with factmemo.remembered():
        try:
            running = codeprint.discover()
        except codeprint.CodeprintError as exc:
            return problems + [f"cannot read the running code: {exc.path.name}:{exc.line}: {exc.message}"]
        with codeprint.batch():
            return problems + _code_problems(plan, running)


def _code_problems(plan: dict[str, Any], running: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for ref, entry in sorted(plan.get("code", {}).items()):
        comp = running.get(ref)
        if comp is None:
            others = sorted(r for r, c in running.items() if c.id == entry["id"])
            now = f" (the code now declares {', '.join(others)})" if others else ""
            problems.append(f"code {ref} is locked but not present in the running code{now}")
            continue
        if (entry.get("id"), entry.get("module")) != (comp.id, comp.module):  # the version is the ref's
            # The fingerprint covers the files of the running component, not the module the lock
            # names: a lock naming another module would pass it and run other code.
            problems.append(f"code {ref}: the lock names module {entry['module']!r}, but the running code declares "
                            f"{ref} in {comp.module!r}; only that module is verified and imported")
            continue
        try:
            printed = codeprint.fingerprint(comp)
        except codeprint.CodeprintError as exc:
            problems.append(f"code {ref}: cannot fingerprint the running code: {exc.path.name}:{exc.line}: {exc.message}")
            continue
        if printed.fingerprint != entry["fingerprint"]:
            locked, current = entry["files"], printed.files
            changed = sorted(f for f in set(locked) | set(current) if locked.get(f) != current.get(f))
            problems.append(f"code {ref} differs from what was locked ({entry['fingerprint']} -> {printed.fingerprint}); "
                            f"changed: {', '.join(changed)}")
    return problems
