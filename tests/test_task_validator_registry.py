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

CACHED_RECALCULATION = True  # tests/conftest.py: one recalculation per distinct workbook in this module

REPO = Path(__file__).resolve().parents[1]
GENERATORS = {c.id: c for c in codeprint.discover(codeprint.runtime_root()).values() if c.id.startswith("lrc.task.")}

# sha256 over (input name, bytes)* + oracle of each generator for seed "canary", task "fa.canary":
# behaviour the source fingerprint might miss (a library upgrade) shows here (DESIGN §2).
CANARY = {
    "lrc.task.add-required-slide": "f4c0d63b14f2b094613917456ca321206e8a9115617e1a67b8bffdc69ed3c66a",
    "lrc.task.add-sensitivity-table": "407e0bf9eddb6078cdae0dbea7df5df530942953389d76da8755708dca77ccc8",
    "lrc.task.budget-vs-actual": "9a92a19a7de92ef9e061e78ac6841a8c85d465e1d1ae1f3ed2d27c5cbb6621a8",
    "lrc.task.build-dcf": "0106c545567f22a05b37b8ca3de846e851ffe30c593fcb7dc680201798faa349",
    "lrc.task.extend-quarter": "ee2a833f447e2163684f25f9f736753ab76c7b89cd305d9ac509bf519a010ab2",
    "lrc.task.fix-broken-reference": "ca6acc99443465cf3fa51327018974dac7d7997aedd5e3829672d2086d33a52f",
    "lrc.task.fix-cash-flow": "807ed0696076f9097885d7d527268e45082553cf8e0e737b6dd28cddfc04e97d",
    "lrc.task.fix-dcf": "bdbd9d63d69d119edf2c29067f2a4c92dbe846b9894667907d1ee2875b518a92",
    "lrc.task.fix-period-header-order": "38fbf20f74391216b6173bff5f952784223cdfd009fc57dcbc743eae254b582b",
    "lrc.task.fix-sign": "ac7865f7da0dac5d40709874cbdcadbd90b2b71614abacfcc2a6cc2f08bd8d00",
    "lrc.task.fix-units": "f4c19a330bb99d5ca999ede6ffd17ec67ae423efda34dc375c45f9648601738d",
    "lrc.task.refresh-deck-chart": "4974d5385301961ade3cf7b94b502859e83df8082e422df8bfd66043e839d0e6",
    "lrc.task.refresh-deck-table": "b1968a584cd4b45b0b22c4191754b62b1efddeb4d33bf2e72f0c0b61188d5391",
    "lrc.task.refresh-deck-text": "0e1bd15ba23f0e96b641148b6d57091240fe2ed802b2376567e7d45f6b374a98",
    "lrc.task.restore-defined-name": "582d42e2373d50feb1d9249614333c30405e66d2c9c16404057fcaa07f2c5051",
    "lrc.task.roll-debt-forward": "d0cef39ce36e2a20728c6a660733be8c2ee8bd5dde0becc9a75b1b7066163bc6",
    "lrc.task.roll-deferred-revenue-forward": "7d685d9bd78d208071b201f40e9e421636e6b5a2eefe7979ccc455eb01f040db",
    "lrc.task.roll-fixed-assets-forward": "8b20530a89d216d36028cffeafbdf7ffdb2f0ce680821928592821106811975e",
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


def test_every_task_kind_is_a_generator_component() -> None:
    assert {f"lrc.task.{k}" for k in tasks.KINDS} == set(GENERATORS)
    for ident in GENERATORS:
        assert ident == f"lrc.task.{_module(ident).KIND}" and _module(ident).KIND in tasks.KINDS


def test_every_task_kind_has_a_spec() -> None:
    from ruamel.yaml import YAML

    pinned = {a["generator"].rsplit(".v", 1)[0] for p in _specs() for a in YAML(typ="safe").load(p.read_text())["input_artifacts"]}
    assert pinned == set(GENERATORS)
    assert len(_specs()) >= 15


def _described(node, at: str = ""):
    """(pointer, schema) of every property schema in `node`, nested ones and oneOf branches included."""
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            yield f"{at}/properties/{name}", sub
        for key, value in node.items():
            yield from _described(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _described(value, f"{at}/{i}")


@pytest.mark.parametrize("vid", sorted(VALIDATORS))
def test_every_param_of_the_registry_is_described_and_closed(vid: str) -> None:
    schema = VALIDATORS[vid].params
    Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    missing = [p for p, sub in _described(schema) if len(str(sub.get("description", "")).strip()) < 8]
    assert not missing, f"{vid}: properties without a description: {missing}"


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


@pytest.mark.parametrize("params, ok", [
    ({"rows": [{"label": "Revenue", "sheet": "IS", "row": "Revenue"}]}, True),
    ({"series": [{"label": "Revenue", "sheet": "IS", "row": "Revenue"}]}, True),
    ({"figures": [{"sheet": "IS", "row": "Revenue", "period": "Q1 FY26"}]}, True),
    ({}, False),  # nothing to tie would pass vacuously
    ({"rows": [{"label": "Revenue", "sheet": "IS", "row": "Revenue"}],
      "series": [{"label": "Revenue", "sheet": "IS", "row": "Revenue"}]}, False),  # the validator would read one only
])
def test_summary_ties_takes_exactly_one_kind_of_figures(params: dict, ok: bool) -> None:
    base = {"file": "deck.pptx", "model_file": "model.xlsx", "slide": 2, "shape": "Key figures"}
    assert Draft202012Validator(VALIDATORS["fa.summary-ties"].params).is_valid({**base, **params}) is ok


@pytest.mark.parametrize("pattern, ok", [("=D{r}-C{r}", True), ("={p}4+{c}5", True), ("=SUM(C7:F7)", True),
                                         ("={x}4", False), ("=C{r", False), ("C4", False)])
def test_a_formula_pattern_names_only_known_placeholders(pattern: str, ok: bool) -> None:
    params = {"file": "model.xlsx", "cells": [{"sheet": "Budget", "row": "Revenue", "pattern": pattern}]}
    assert Draft202012Validator(VALIDATORS["fa.formula-presence"].params).is_valid(params) is ok


def _spec(path: Path) -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text())


@pytest.mark.parametrize("path", _specs(), ids=lambda p: p.parent.name)
def test_a_task_spec_permits_only_toolbox_tools(path: Path) -> None:
    from lrc.runtime.artifacts.toolschemas import schemas

    tools = {t["function"]["name"] for t in schemas()}
    spec = _spec(path)
    assert set(spec["permitted_tools"]) <= tools, sorted(set(spec["permitted_tools"]) - tools)
    assert "submit" in spec["permitted_tools"]  # the one way a run hands its files back


@pytest.mark.parametrize("path", _specs(), ids=lambda p: p.parent.name)
def test_every_failure_mode_of_a_spec_is_observed_by_a_check_it_runs(path: Path) -> None:
    spec = _spec(path)
    checked = {c["validator"] for c in spec["checks"]}
    for mode in spec["failure_modes"]:
        assert mode.get("observed_by") and set(mode["observed_by"]) <= checked, mode["id"]


@pytest.mark.parametrize("path", _specs(), ids=lambda p: p.parent.name)
def test_a_spec_objective_spells_out_none_of_its_generators_expected_formulas(path: Path) -> None:
    """Inclusion rule 5 where the compiler cannot look: the expected formulas of a generated task
    exist only in its generator's checks, so the compiler's own comparison (LRC6114) runs here
    on them, for two seeds."""
    from lrc.compiler.tasks import _squeeze, _template_regex

    spec = _spec(path)
    ident = spec["input_artifacts"][0]["generator"].rsplit(".v", 1)[0]
    objective = _squeeze(spec["objective"])
    for seed in ("spec-test", "canary"):
        for check in _module(ident).generate(seed, spec["id"]).checks:
            for pointer, value in expected_values(check["validator"], check["params"]):
                assert not _template_regex(value).search(objective), (check["validator"], pointer, value)


def test_the_objective_check_reads_row_placeholders_as_any_row_number() -> None:
    from lrc.compiler.tasks import _squeeze, _template_regex

    assert _template_regex("=D{r}-C{r}").search(_squeeze("Variance: = D4 - C4 on every line"))
    assert _template_regex("={c}$4*$B{r}").search(_squeeze("each cell =E$4*$B7"))
    assert not _template_regex("=D{r}-C{r}").search(_squeeze("Variance is actual minus budget"))
