"""A plan.lock handed over by someone else is refused on its content, not only on its digests.

A lock's digests are plain sha256 over its own content, so a forger edits the plan and
rebuilds them with the lock builder (`lockformat.build`, as the compiler writes a lock): every
lock here passes its own digest check. The runtime must still refuse it, with exit 4 and a
message naming the JSON pointer of the value — never a traceback, a hang, a write outside
--out, or the import of a module the lock chooses.

The in-process cases read the committed demo lock (reading a lock does not depend on the code
fingerprints); the `lrc execute` cases use the small demo compiled once per session from the
current tree, so that nothing but the tampering can be what refuses them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from lrc.runtime.lock import format as lockformat
from support import REPO, run_lrc

LOCK = REPO / "generated" / "demo" / "plan.lock"
WORKLOAD = "triage.ap-inbox"


@pytest.fixture(scope="module")
def lock_data() -> dict[str, Any]:
    return json.loads(LOCK.read_bytes())


def forge(lock: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> bytes:
    """The lock with `edit` applied to its plan and every digest rebuilt: a careful forger's lock."""
    plan = copy.deepcopy(lock["plan"])
    edit(plan)
    return lockformat.dumps(lockformat.build(plan))


def _ref(plan: dict[str, Any], section: str, prefix: str) -> str:
    return next(k for k in plan[section] if k.startswith(prefix))


def _rename_workload(plan: dict[str, Any], new: str) -> None:
    old = _ref(plan, "workloads", WORKLOAD + ".v")
    entry = plan["workloads"].pop(old)
    entry["ref"] = new
    plan["workloads"][new] = entry
    refs = plan["edition"]["spec"]["workloads"]
    refs[refs.index(old)] = new


def _set(path: tuple, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(plan: dict[str, Any]) -> None:
        node = plan
        for part in path[:-1]:
            node = node[part] if not callable(part) else node[part(node)]
        last = path[-1]
        node[last if not callable(last) else last(node)] = value
    return edit


def _first(prefix: str) -> Callable[[dict[str, Any]], str]:
    return lambda node: next(k for k in node if k.startswith(prefix))


def _delete(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda plan: plan.pop(key)


def _rename_model(plan: dict[str, Any], old: str, new: str) -> None:
    entry = plan["models"].pop(old)
    entry["id"] = new
    plan["models"][new] = entry


def _swap_module(plan: dict[str, Any]) -> None:
    """The generator entry names the grading module: an lrc.runtime module, but not the verified one."""
    gen, grading = _ref(plan, "code", WORKLOAD + ".generator."), _ref(plan, "code", WORKLOAD + ".grading.")
    plan["code"][gen]["module"] = plan["code"][grading]["module"]


GEN, WL, SINGLE = _first(WORKLOAD + ".generator."), _first(WORKLOAD + ".v"), _first("single-shot.")


def _rekey(section: str, old: Callable[[dict[str, Any]], str], new: str) -> Callable[[dict[str, Any]], None]:
    return lambda plan: plan[section].__setitem__(new, plan[section].pop(old(plan[section])))


# (id, edit of the plan, the JSON pointer or text the refusal must name)
CONTENT_TAMPERINGS = [
    ("workload-ref-escapes-the-run-folder", lambda p: _rename_workload(p, "../../../esc/x.v4"),
     "/plan/workloads/..~1..~1..~1esc~1x.v4"),
    ("workload-ref-is-dot-dot", lambda p: _rename_workload(p, ".."), "/plan/workloads/.."),
    ("workload-keyed-under-another-name", lambda p: _rename_workload(p, "other.name.v4"), "/plan/workloads/other.name.v4"),
    ("code-module-outside-lrc", _set(("code", GEN, "module"), "this"), "/module"),
    ("models-not-an-object", _set(("models",), 5), "/plan/models"),
    ("workload-spec-null", _set(("workloads", WL, "spec"), None), "/spec"),
    ("seed-removed", _delete("seed"), "seed"),
    ("repetitions-1e9", _set(("edition", "spec", "repetitions"), 10**9), "/plan/edition/spec/repetitions"),
    ("n-per-cell-1e9", _set(("edition", "spec", "n_per_cell"), 10**9), "/plan/edition/spec/n_per_cell"),
    ("n-per-cell-string", _set(("edition", "spec", "n_per_cell"), "15"), "/plan/edition/spec/n_per_cell"),
    ("system-id-with-a-slash", _set(("systems", SINGLE, "spec", "id"), "a/b"), "/plan/systems/single-shot."),
    ("unknown-plan-section", _set(("zzz",), {}), "zzz"),
    ("edition-names-a-missing-system", _set(("edition", "spec", "systems", 0), "nowhere.v1"), "/plan/edition/spec/systems/0"),
    ("model-keyed-under-another-id", _rekey("models", lambda _: "lrc/oracle", "lrc/other"), "/plan/models/lrc~1other"),
    ("model-id-leaving-the-folder", lambda p: _rename_model(p, "lrc/oracle", "../../x"), "/plan/models/..~1..~1x"),
    ("model-price-not-the-editions", _set(("models", "lrc/oracle", "price", "output"), "9"), "/plan/models/lrc~1oracle"),
    ("model-setting-of-another-json-type", _set(("models", "lrc/oracle", "accepts_files"), 0), "/plan/models/lrc~1oracle"),
    ("system-implementation-not-locked", _set(("systems", SINGLE, "spec", "implementation"), "nowhere.v1"), "/spec/implementation"),
    ("generator-not-locked", _set(("workloads", WL, "spec", "dataset", "generator"), "nowhere.v1"), "/spec/dataset/generator"),
    ("prompts-of-no-system", _set(("workloads", WL, "prompts"), {}), "/prompts"),
    ("prompt-template-not-the-specs", _set(("workloads", WL, "prompts", "single-shot", "user", "template"), "{{ 7 * 7 }}"),
     "/prompts/single-shot"),
    ("tool-definition-not-the-specs", _set(("workloads", WL, "tools", "agentic"), [None]), "/tools"),
    ("terminal-tool-not-the-specs", _set(("workloads", WL, "terminal_tools", "agentic"), ["nope"]), "/terminal_tools"),
    ("public-seed-not-its-commitment", _set(("seed", "value"), "another-seed"), "/plan/seed"),
    ("code-keyed-under-another-version", _rekey("code", GEN, "x.v1"), "/plan/code/x.v1"),
]


@pytest.mark.parametrize("edit,where", [pytest.param(e, w, id=i) for i, e, w in CONTENT_TAMPERINGS])
def test_a_redigested_lock_with_content_lrc_never_compiles_is_refused_at_its_pointer(lock_data, edit, where):
    data = forge(lock_data, edit)
    with pytest.raises(lockformat.LockError) as refused:
        lockformat.loads(data)
    message = str(refused.value)
    assert where in message, message
    assert "recomputed" in message  # the digests agree: the message says they prove nothing


def test_an_unknown_top_level_key_outside_the_digests_is_refused(lock_data):
    lock = copy.deepcopy(lock_data)
    lock["zzz"] = 1  # outside the root digest: the digests still agree
    assert lockformat.verify_digests(lock) == []
    with pytest.raises(lockformat.LockError, match="zzz"):
        lockformat.loads(lockformat.dumps(lock))


PARSE_TAMPERINGS = {
    "a-5000-digit-integer": lambda b: b.replace(b'"lock_format": 1', b'"lock_format": 1, "n": ' + b"9" * 5000),
    "arrays-nested-100000-deep": lambda b: b.replace(b'"lock_format": 1', b'"lock_format": 1, "n": ' + b"[" * 100_000 + b"]" * 100_000),
    "nan": lambda b: b.replace(b'"lock_format": 1', b'"lock_format": 1, "zzz": NaN'),
    "a-key-twice": lambda b: b.replace(b'"lock_format": 1', b'"lock_format": 1, "lock_format": 1'),
    "not-an-object": lambda b: b"[1]",
}


@pytest.mark.parametrize("damage", PARSE_TAMPERINGS.values(), ids=PARSE_TAMPERINGS.keys())
def test_json_that_would_crash_a_reader_is_a_lock_error(damage):
    with pytest.raises(lockformat.LockError, match="not a plan.lock"):
        lockformat.loads(damage(LOCK.read_bytes()))


def test_the_schemas_a_lock_is_checked_against_ship_beside_the_runtime():
    """Found from the package's own location (an installed wheel holds them as lrc/schemas/,
    setup.py), never from the current folder."""
    from lrc.runtime.lock import shape

    assert shape.SCHEMAS == Path(shape.__file__).resolve().parents[2] / "schemas"
    for kind in ("lock", "edition", "standard", "system", "workload", "rubric", "task", "taxonomy"):
        assert shape.schema(kind)["$schema"].startswith("https://json-schema.org/")


def test_the_committed_locks_are_read(lock_data):
    for path in sorted((REPO / "generated").glob("*/plan.lock")):
        assert lockformat.loads(path.read_bytes())["plan"]


def test_a_lock_naming_another_lrc_module_for_a_component_is_refused_by_verify(lock_data):
    """The fingerprint covers the running component's files, not the module the lock names."""
    from lrc.runtime.verify import verify

    lock = lockformat.loads(forge(lock_data, _swap_module))  # a plain lrc.runtime module name: well formed
    gen = _ref(lock["plan"], "code", WORKLOAD + ".generator.")
    assert any(p.startswith(f"code {gen}: the lock names module") for p in verify(lock)), verify(lock)


def test_import_modules_imports_only_what_the_running_code_declares(lock_data):
    from lrc.runtime.execute import Refused, import_modules

    plan = copy.deepcopy(lock_data["plan"])
    _swap_module(plan)
    with pytest.raises(Refused, match="the lock names module"):
        import_modules(plan)


# -- end to end: `lrc execute` of a forged lock -------------------------------------------------

@pytest.fixture(scope="module")
def fresh_lock(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    from helpers.shared import small_demo_lock

    path = small_demo_lock(tmp_path_factory)
    return path, json.loads(path.read_bytes())


def _execute(lock: Path, out: Path):
    return run_lrc("execute", lock, "--out", out, "--models", "lrc/oracle", "--limit", "1", timeout=120)


def test_execute_refuses_a_lock_whose_workload_ref_leaves_the_run_folder(fresh_lock, tmp_path):
    _, data = fresh_lock
    bad = tmp_path / "plan.lock"
    bad.write_bytes(forge(data, lambda p: _rename_workload(p, "../../esc/x.v4")))
    out = tmp_path / "a" / "out"
    res = _execute(bad, out)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "/plan/workloads/..~1..~1esc~1x.v4" in res.stderr and "Traceback" not in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.lock"]  # nothing written anywhere


def test_execute_never_imports_a_module_the_lock_names(fresh_lock, tmp_path):
    _, data = fresh_lock
    bad = tmp_path / "plan.lock"
    bad.write_bytes(forge(data, _set(("code", GEN, "module"), "this")))
    res = _execute(bad, tmp_path / "out")
    assert res.returncode == 4, res.stdout + res.stderr
    assert "The Zen of Python" not in res.stdout + res.stderr and "Traceback" not in res.stderr
    assert "/module" in res.stderr


@pytest.mark.parametrize("damage", [PARSE_TAMPERINGS["a-5000-digit-integer"], _set(("edition", "spec", "repetitions"), 10**9)],
                         ids=["a-5000-digit-integer", "repetitions-1e9"])
def test_execute_exits_4_on_a_lock_that_would_crash_or_stall_it(fresh_lock, tmp_path, damage):
    path, data = fresh_lock
    bad = tmp_path / "plan.lock"
    bad.write_bytes(damage(path.read_bytes()) if damage in PARSE_TAMPERINGS.values() else forge(data, damage))
    res = _execute(bad, tmp_path / "out")
    assert res.returncode == 4, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "out").exists()


# -- the class: any value anywhere, digests rebuilt -----------------------------------------------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

HOSTILE_VALUES = [None, True, 0, -1, 10**9, 1.5, "", "..", "../../x", "lrc.compiler.cli", [], {}, [None], {"": None}]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choices=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=6),
       value=st.sampled_from(HOSTILE_VALUES))
def test_any_value_anywhere_in_a_redigested_plan_is_read_or_refused_never_a_crash(lock_data, choices, value):
    """Reading a lock either accepts it or raises LockError: never another exception, whatever
    value stands wherever in the plan (the checks themselves must not trip over what they check)."""
    def edit(plan: dict[str, Any]) -> None:
        node: Any = plan
        for i, choice in enumerate(choices):
            keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys:
                break
            key = keys[choice % len(keys)]
            child = node[key]
            if i == len(choices) - 1 or not isinstance(child, (dict, list)) or not child:
                node[key] = value
                return
            node = child

    try:
        lockformat.loads(forge(lock_data, edit))
    except lockformat.LockError:
        pass
