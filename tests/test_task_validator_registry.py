"""The registry of artifact validator ids (lrc.runtime.lock.artifact_validators, what the
compiler checks task specs against) agrees with the validators and the task generators, and
the task specs agree with the generators they pin.

Why: the compiler never imports the validators or the generators (they pull in openpyxl), so
nothing at compile time can notice a registry that drifted from the code. These tests can.
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from lrc.runtime.artifacts import tasks
from lrc.runtime.artifacts.validators.component import registry_problems
from lrc.runtime.lock import codeprint
from lrc.runtime.lock.artifact_validators import VALIDATORS, expected_values

REPO = Path(__file__).resolve().parents[1]
GENERATORS = {c.id: c for c in codeprint.discover(codeprint.runtime_root()).values() if c.id.startswith("lrc.task.")}

# sha256 over (input name, bytes)* + oracle of each generator for seed "canary", task "fa.canary":
# behaviour the source fingerprint might miss (a library upgrade) shows here (DESIGN §2).
CANARY = {
    "lrc.task.extend-quarter": "ee2a833f447e2163684f25f9f736753ab76c7b89cd305d9ac509bf519a010ab2",
    "lrc.task.fix-cash-flow": "807ed0696076f9097885d7d527268e45082553cf8e0e737b6dd28cddfc04e97d",
    "lrc.task.fix-sign": "ac7865f7da0dac5d40709874cbdcadbd90b2b71614abacfcc2a6cc2f08bd8d00",
    "lrc.task.refresh-deck-table": "b1968a584cd4b45b0b22c4191754b62b1efddeb4d33bf2e72f0c0b61188d5391",
}


def _module(ident: str):
    return importlib.import_module(GENERATORS[ident].module)


def test_the_registry_matches_the_implemented_validators() -> None:
    assert registry_problems() == []


@pytest.mark.parametrize("kind", tasks.KINDS)
def test_every_check_a_task_kind_declares_follows_the_registry(kind: str) -> None:
    for check in tasks.make(kind, "registry-test").checks:
        entry = VALIDATORS[check["validator"]]
        Draft202012Validator(entry.params).validate(check["params"])


def test_every_kind_of_the_original_four_is_a_generator_component() -> None:
    assert {f"lrc.task.{k}" for k in ("extend-quarter", "fix-cash-flow", "fix-sign", "refresh-deck-table")} <= set(GENERATORS)
    for ident in GENERATORS:
        assert _module(ident).KIND in tasks.KINDS


@pytest.mark.parametrize("ident", sorted(CANARY))
def test_generator_canary_digest(ident: str) -> None:
    task = _module(ident).generate("canary", "fa.canary")
    h = hashlib.sha256()
    for name in sorted(task.inputs):
        h.update(name.encode() + b"\0" + task.inputs[name] + b"\0")
    h.update(task.oracle)
    assert h.hexdigest() == CANARY[ident]


def test_the_task_id_enters_the_seed() -> None:
    gen = _module("lrc.task.fix-sign")
    assert gen.generate("canary", "fa.a").inputs != gen.generate("canary", "fa.b").inputs


def _specs() -> list[Path]:
    return sorted((REPO / "specs/tasks").glob("*/task.yaml"))


@pytest.mark.parametrize("path", _specs(), ids=lambda p: p.parent.name)
def test_a_task_spec_agrees_with_the_generator_it_pins(path: Path) -> None:
    """Same input files and output, the same validator ids in order, and every param the spec
    states equal to the generator's (the contract `lrc execute` relies on: the generator
    supplies the seeded params, the spec may fix the others but never contradict them)."""
    from ruamel.yaml import YAML

    spec = YAML(typ="safe").load(path.read_text())
    generators = {a["generator"] for a in spec["input_artifacts"]}
    assert len(generators) == 1
    ident = generators.pop().rsplit(".v", 1)[0]
    task = _module(ident).generate("spec-test", spec["id"])
    assert sorted(a["file"] for a in spec["input_artifacts"]) == sorted(task.inputs)
    assert spec["output"]["file"] == task.output
    assert [c["validator"] for c in spec["checks"]] == [c["validator"] for c in task.checks]
    for mine, theirs in zip(spec["checks"], task.checks):
        assert {k: theirs["params"].get(k) for k in mine.get("params", {})} == mine.get("params", {})


def test_expected_values_are_read_from_formula_patterns() -> None:
    params = {"file": "model.xlsx", "cells": [{"sheet": "IS", "row": "Tax", "pattern": "=-ROUND({c}11*TaxRate,2)"}]}
    assert expected_values("fa.formula-presence", params) == [("/cells/0/pattern", "=-ROUND({c}11*TaxRate,2)")]
    assert expected_values("fa.identities", {"file": "model.xlsx"}) == []
