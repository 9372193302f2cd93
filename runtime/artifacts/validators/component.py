"""The artifact validators (this package) as one versioned code component, with their registry.

Why a module of its own: a task spec pins the code that grades it (`validators:
lrc.artifact-validators.v1`), like a workload pins its grading, and the lock freezes it by
fingerprint. Importing both the validators and their registry
(`lrc.runtime.lock.artifact_validators`, what the compiler checks specs against) puts both in
that fingerprint: a changed parameter schema is a code change too.
"""

from __future__ import annotations

from lrc.runtime.artifacts.validators import FAMILIES, VERSION, run, run_all
from lrc.runtime.lock.artifact_validators import COMPONENT, VALIDATORS

COMPONENT_ID = "lrc.artifact-validators"
COMPONENT_VERSION = 5

__all__ = ["COMPONENT", "registry_problems", "run", "run_all"]


def registry_problems() -> list[str]:
    """Where the registry and the implemented validators disagree (ids, versions, families)."""
    problems = [f"{vid} is implemented but not in the registry" for vid in sorted(set(FAMILIES) - set(VALIDATORS))]
    problems += [f"{vid} is in the registry but not implemented" for vid in sorted(set(VALIDATORS) - set(FAMILIES))]
    for vid in sorted(set(FAMILIES) & set(VALIDATORS)):
        if VALIDATORS[vid].version != VERSION:
            problems.append(f"{vid}: the registry says version {VALIDATORS[vid].version}, its results carry {VERSION}")
        if VALIDATORS[vid].family != FAMILIES[vid][0]:
            problems.append(f"{vid}: the registry says family {VALIDATORS[vid].family}, the code {FAMILIES[vid][0]}")
    if COMPONENT != COMPONENT_ID:
        problems.append(f"the registry names component {COMPONENT}, this module is {COMPONENT_ID}")
    return problems
