"""The fast code fingerprints and canonical JSON equal the reference forms they replaced.

- `_serialize_stripped` (one pass, no mutation, per-class serializers) equals `_serialize`
  after `_strip_docstrings` and `_blank_version` on a copy;
- `_import_nodes` lists the import statements in `ast.walk` order;
- every component's fingerprint equals the one the committed ledger records;
- `_fast`'s shortcut (strings stripped, one search for floats and long integers) and its
  `integers_only` promise give the bytes of the exact per-token check.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import copy
import json
import re
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings, strategies as st

from lrc.runtime.lock import canonical, codeprint
from lrc.runtime.lock.canonical import _fast, canonical_bytes
from support import REPO

RUNTIME_FILES = sorted(p for p in codeprint.runtime_root().rglob("*.py") if "__pycache__" not in p.parts)

TRICKY_SOURCES = [
    '"""Only a docstring."""\n',
    '"""Doc."""\nCOMPONENT_ID = "x.y"\nCOMPONENT_VERSION = 3\n',
    'COMPONENT_VERSION = 2\nCOMPONENT_VERSION = 5\nx = COMPONENT_VERSION\n',
    'def f():\n    "doc"\n\nasync def g():\n    """doc"""\n    return 1\n\nclass C:\n    "doc"\n    def m(self):\n        "doc"\n        x = 1\n',
    'def f():\n    b"not a docstring"\n    1\n\ndef g():\n    "doc"\n    "second string stays"\n',
    'class C:\n    def f(self):\n        def inner():\n            "doc"\n        return inner\n',
    'x = 1.5 + 2j + 0x1F + 2**60 + 9007199254740993 + 9007199254740991\ny = b"\\x00" + ...\nz = (-1, True, None, False)\n',
    'def f(a, /, b=1, *c, d, e=2, **g) -> int:\n    return f"{a!r:>10} {b!s} {c!a} {d=}"\n',
    'match x:\n    case [1, *rest] if rest:\n        pass\n    case {"k": v, **kw}:\n        pass\n    case Point(x=0) | None:\n        pass\n',
    'try:\n    import a\nexcept* ValueError:\n    import b\nelse:\n    from . import c\nfinally:\n    from ..d import e as f\n',
    'global_x: int = 1\nlambda: (yield)\n[i async for i in x]\n{**a, "b": 1}\ndel x[1:2:3]\n',
    's = "\\ud800"\nt = "\U0001f600"\n',
    'import a.b.c, d\nif x:\n    import e\n    def f():\n        from .g import h\n        import i\nwhile y:\n    import j\nelse:\n    import k\nfor z in w:\n    with q:\n        import l\n',
]


def _reference(tree: ast.Module):
    tree = copy.deepcopy(tree)
    codeprint._strip_docstrings(tree)
    codeprint._blank_version(tree)
    return codeprint._serialize(tree)


# The default suite compares on a sample of the runtime's files -- the tricky sources, the eight
# largest files (the most kinds of node) and every sixth of the rest in path order -- and
# `--slow` (CI) on every file: the full comparison re-parses and deep-copies the whole runtime,
# ~10 s of CPU per run of the suite, for cases the sample's constructs already cover.
_LARGEST = set(sorted(RUNTIME_FILES, key=lambda p: (-p.stat().st_size, p.as_posix()))[:8])
SAMPLED_FILES = [p for i, p in enumerate(RUNTIME_FILES) if p in _LARGEST or i % 6 == 0]
TREE_NAMES = [pytest.param(p.as_posix(), marks=() if p in SAMPLED_FILES else pytest.mark.slow) for p in RUNTIME_FILES] \
    + [f"tricky[{i}]" for i in range(len(TRICKY_SOURCES))]


@functools.lru_cache(maxsize=None)
def _tree(name: str) -> ast.Module:
    """Parsed when a test asks, not at collection: every worker collects every module, and
    parsing the whole runtime there cost each of them seconds before any test ran."""
    if name.startswith("tricky["):
        return ast.parse(TRICKY_SOURCES[int(name[len("tricky["):-1])])
    return ast.parse(Path(name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", TREE_NAMES)
def test_one_pass_serialization_equals_reference(name):
    tree = _tree(name)
    before = ast.dump(tree, include_attributes=True)
    fast = codeprint._serialize_stripped(tree)
    assert ast.dump(tree, include_attributes=True) == before, "the shared tree must not be mutated"
    expected = _reference(tree)
    assert fast == expected
    assert _outcome(lambda: canonical.digest("code-ast", fast, integers_only=True)) == _outcome(
        lambda: canonical.digest("code-ast", expected))


def _outcome(compute):
    try:
        return compute()
    except canonical.CanonicalError as exc:  # e.g. a lone surrogate in a string literal: refused both ways
        return ("refused", str(exc))


@pytest.mark.parametrize("name", TREE_NAMES)
def test_import_nodes_in_walk_order(name):
    tree = _tree(name)
    expected = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert codeprint._import_nodes(tree) == expected


def _ledger_digests() -> dict[str, str]:
    out = {}
    for line in (REPO / "generated" / "ledger.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("kind") == "code":
            out[f"{entry['id']}.v{entry['version']}"] = entry["digest"]
    return out


def test_fingerprints_equal_the_committed_ledger():
    components = codeprint.discover()
    assert components
    recorded = _ledger_digests()
    for ref, comp in components.items():
        printed = codeprint.fingerprint(comp)
        ledger_file = REPO / "generated" / "ledger" / "code" / f"{ref}.json"
        assert printed.files == json.loads(ledger_file.read_text(encoding="utf-8"))["files"], ref
        assert printed.fingerprint == recorded[ref], ref


@pytest.mark.parametrize("files", [pytest.param("sampled", id="sampled"), pytest.param("every", marks=pytest.mark.slow, id="every")])
def test_facts_match_a_fresh_parse_of_every_runtime_file(files):
    for path in (SAMPLED_FILES if files == "sampled" else RUNTIME_FILES):
        facts = codeprint._read_facts(path)
        assert facts.error is None
        assert facts.digest == canonical.digest("code-ast", _reference(ast.parse(path.read_text(encoding="utf-8"))))


def test_bad_declarations_are_refused_as_before(tmp_path: Path):
    root = tmp_path / "runtime"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "bad.py").write_text('COMPONENT_ID = "a.b"\n\nCOMPONENT_VERSION = "1"\n')
    with pytest.raises(codeprint.CodeprintError) as info:
        codeprint.discover(root)
    assert info.value.line == 3 and "positive integer literal" in info.value.message
    (root / "bad.py").write_text('COMPONENT_ID = "a.b"\nCOMPONENT_VERSION = 1\ndef (:\n')
    with pytest.raises(codeprint.CodeprintError) as info:
        codeprint.discover(root)
    assert info.value.line == 3 and info.value.message.startswith("cannot parse")
    (root / "bad.py").write_text('COMPONENT_ID = 7\nCOMPONENT_VERSION = 2\n')
    with pytest.raises(codeprint.CodeprintError) as info:
        codeprint.discover(root)
    assert info.value.line == 2 and "both COMPONENT_ID and COMPONENT_VERSION" in info.value.message


# canonical JSON ------------------------------------------------------------------------------

_OLD_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[-0-9][-+.0-9eE]*')


def _old_fast(value):
    """`_fast` as it was: the per-token loop over every token."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        data = text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError):
        return None
    if canonical._NON_BMP.search(text):
        return None
    for match in _OLD_TOKEN.finditer(text):
        token = match.group()
        if token[0] != '"' and (not canonical._SAFE_INT.fullmatch(token) or abs(int(token)) > canonical._MAX_SAFE):
            return None
    return data


TRICKY_VALUES = [
    0, -0, 1, -1, 10**15 - 1, 10**15, 2**53 - 1, -(2**53 - 1), 2**53, -(2**53), 10**16, 1234567890123456,
    0.0, -0.0, 1.5, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, True, False, None,
    "1.5", "1e3", 'a"b', 'a\\"1.5', "\\", '\\"', "9007199254740993", "x\n1.5", "\u2028 1e3", "😀",
    {"1.5": 1, "2e3": [1, 2, "3.5"]}, {"a": True, "b": False, "c": None, "d": [1, -2, 3]},
    [1, "2.5", {"k": "\\\\", "v": 12345678901234567}], {"\ud800": 1}, [float("nan")],
    {"true": "false", "e": "E", "n": -123456789012345},
]


@pytest.mark.parametrize("value", TRICKY_VALUES, ids=repr)
def test_fast_equals_old_token_check(value):
    assert _fast(value) == _old_fast(value)


def test_integers_only_skips_only_the_number_check():
    for value in TRICKY_VALUES:
        if _old_fast(value) is not None:
            assert _fast(value, integers_only=True) == _old_fast(value)
    assert _fast({"x": "😀"}, integers_only=True) is None
    assert _fast({"x": "\ud800"}, integers_only=True) is None


strings = st.text(alphabet=st.sampled_from(list('ab"\\\n.eE+-0123456789 \u2028😀')), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.sampled_from([2**53 - 1, 2**53, 10**15, 10**16 - 1])
    | st.floats(allow_nan=False, allow_infinity=False) | strings,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(strings, children, max_size=5),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(json_values)
def test_fast_equals_old_and_rfc8785(value):
    fast = _fast(value)
    assert fast == _old_fast(value)
    if fast is not None:
        assert fast == rfc8785.dumps(value) == canonical_bytes(value)


def test_a_batch_shares_path_lookups_and_gives_the_same_fingerprints(monkeypatch):
    """codeprint.batch(): the fingerprints of every component are those computed one by one,
    with each module path probed once for the whole batch instead of once per component."""
    from lrc.runtime.lock import codeprint

    components = list(codeprint.discover().values())
    alone = {c.ref: codeprint.fingerprint(c) for c in components}
    probes = []
    real = codeprint._find_module
    monkeypatch.setattr(codeprint, "_find_module", lambda module, root: probes.append(module) or real(module, root))
    with codeprint.batch():
        together = {c.ref: codeprint.fingerprint(c) for c in components}
    assert together == alone
    assert len(probes) == len(set(probes))
    with codeprint.batch():  # a new batch asks the filesystem again
        codeprint.fingerprint(components[0])
    assert len(probes) > len(set(probes))


# -- closure: the batched walk equals the walk it replaced ------------------------------------

def _reference_closure(module: str, root: Path) -> list[Path]:
    """The walk before names and files were looked up once per batch: every pushed name is
    expanded again, every module path asks the filesystem."""
    seen: dict[Path, str] = {}
    todo = [module]
    while todo:
        parts = todo.pop().split(".")
        for i in range(2, len(parts) + 1):
            candidate = ".".join(parts[:i])
            path = codeprint._find_module(candidate, root) if candidate.startswith(codeprint.PACKAGE + ".") or candidate == codeprint.PACKAGE else None
            if path is None or path in seen:
                continue
            seen[path] = candidate
            todo.extend(codeprint._scan_imports(path, candidate))
    return sorted(seen, key=lambda p: p.as_posix())


SYNTHETIC_PACKAGE = {
    # a cycle through a package's __init__, relative imports at two levels, a star import, an
    # import inside a function, names that are functions rather than modules, and a name whose
    # file does not exist
    "__init__.py": "from . import a\n",
    "a.py": "from .b import helper, missing_name\nfrom .pkg import *\n",
    "b.py": "import lrc.runtime.a\ndef helper():\n    from .pkg.deep import f\n    return f\n",
    "pkg/__init__.py": "from ..a import x\n",
    "pkg/deep.py": "from .. import b\nfrom . import nowhere\nimport lrc.runtime.pkg.deep as again\n",
    "lonely.py": "import json\n",
    "c.py": "from .pkg.deep import f\nfrom lrc.runtime import lonely\n",
}


def test_closure_equals_the_unbatched_walk_on_a_package_with_cycles(tmp_path):
    root = tmp_path / "runtime"
    for name, text in SYNTHETIC_PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    modules = ["lrc.runtime", "lrc.runtime.a", "lrc.runtime.b", "lrc.runtime.c", "lrc.runtime.pkg",
               "lrc.runtime.pkg.deep", "lrc.runtime.lonely", "lrc.runtime.nowhere"]
    expected = {m: _reference_closure(m, root) for m in modules}
    assert {p.name for p in expected["lrc.runtime.c"]} == {"__init__.py", "a.py", "b.py", "c.py", "deep.py", "lonely.py"}
    assert expected["lrc.runtime.nowhere"] == expected["lrc.runtime"]  # no file of its own: only the package runs
    for batched in (False, True):  # outside a batch every lookup asks again; inside, once
        with codeprint.batch() if batched else contextlib.nullcontext():
            for module in modules:
                assert codeprint.closure(module, root) == expected[module], (module, batched)
                assert codeprint.closure(module, root) == expected[module], (module, batched)  # a batch's second ask


def test_closure_of_every_runtime_module_equals_the_unbatched_walk():
    root = codeprint.runtime_root()
    modules = sorted({codeprint.module_name(p, root) for p in RUNTIME_FILES})
    with codeprint.batch():
        for module in modules:
            assert codeprint.closure(module, root) == _reference_closure(module, root), module


def test_a_batch_digests_each_file_once_and_a_new_batch_sees_an_edit(tmp_path, monkeypatch):
    root = tmp_path / "runtime"
    for name, text in SYNTHETIC_PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "comp1.py").write_text('COMPONENT_ID = "x.one"\nCOMPONENT_VERSION = 1\nfrom . import a\n', encoding="utf-8")
    (root / "comp2.py").write_text('COMPONENT_ID = "x.two"\nCOMPONENT_VERSION = 1\nfrom . import c\n', encoding="utf-8")
    asked: list[str] = []
    real = codeprint.file_digest
    monkeypatch.setattr(codeprint, "file_digest", lambda p: asked.append(str(p)) or real(p))
    with codeprint.batch():
        comps = codeprint.discover(root)
        first = {ref: codeprint.fingerprint(c, root) for ref, c in comps.items()}
    assert sorted(asked) == sorted(set(asked)), "a file was digested twice in one batch"
    (root / "b.py").write_text("import lrc.runtime.a\nVALUE = 2\n", encoding="utf-8")
    with codeprint.batch():
        again = {ref: codeprint.fingerprint(c, root) for ref, c in codeprint.discover(root).items()}
    assert again["x.one.v1"].fingerprint != first["x.one.v1"].fingerprint  # b.py is in both closures
    assert again["x.two.v1"].fingerprint != first["x.two.v1"].fingerprint
    assert "deep.py" not in {Path(f).name for f in again["x.one.v1"].files}  # b.py no longer imports pkg.deep
