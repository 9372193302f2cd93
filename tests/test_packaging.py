"""`pip install .` gives a working lrc: what lrc imports is what its package declares.

The class of bug: a module of compiler/ or runtime/ imports a third-party package that
`pyproject.toml` does not declare, so an installed lrc (a wheel, the pre-commit hook's
environment) dies with ModuleNotFoundError while the checkout, whose venv installs
requirements.lock, works. These tests read the imports from the source (every `import`,
including those inside functions and try blocks) and compare them with the declarations:
pyproject.toml's [project.dependencies], requirements.in's runtime section and
requirements.lock's hash-locked pins.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from support import REPO

SOURCES = ("compiler", "runtime")
RUNTIME_MARK = "# -- runtime:"
DEV_MARK = "# -- tests and builds only"


def third_party_imports(folders: tuple[Path, ...]) -> dict[str, set[str]]:
    """Top-level module name -> the files importing it, for every absolute import of a module
    that is neither the standard library nor lrc's own."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in ("lrc", "__future__"):
                        continue
                    found.setdefault(top, set()).add(path.relative_to(folder.parent).as_posix())
    return found


def declared(root: Path = REPO) -> dict[str, Requirement]:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return {canonicalize_name(r.name): r for r in map(Requirement, data["project"]["dependencies"])}


def requirements_in(root: Path = REPO) -> tuple[dict[str, Requirement], dict[str, Requirement]]:
    """(runtime section, tests-and-builds section) of requirements.in."""
    runtime: dict[str, Requirement] = {}
    dev: dict[str, Requirement] = {}
    section = None
    for line in (root / "requirements.in").read_text(encoding="utf-8").splitlines():
        if line.startswith(RUNTIME_MARK):
            section = runtime
        elif line.startswith(DEV_MARK):
            section = dev
        stripped = line.split("#", 1)[0].strip()
        if stripped:
            assert section is not None, f"requirements.in: {stripped!r} is above the '{RUNTIME_MARK}' section"
            req = Requirement(stripped)
            section[canonicalize_name(req.name)] = req
    return runtime, dev


def locked(root: Path = REPO) -> dict[str, str]:
    """name -> version of every pin in requirements.lock that carries a hash."""
    text = (root / "requirements.lock").read_text(encoding="utf-8")
    return {canonicalize_name(m.group(1)): m.group(2)
            for m in re.finditer(r"(?m)^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\\n\s+--hash=sha256:[0-9a-f]{64}", text)}


@functools.cache
def _module_owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()  # reads every installed RECORD: once


def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in _module_owners().get(module, [])}


def undeclared_imports(folders: tuple[Path, ...], deps: dict[str, Requirement]) -> dict[str, str]:
    """module -> why, for each third-party import no declared dependency provides."""
    problems = {}
    for module, files in sorted(third_party_imports(folders).items()):
        dists = distributions_of(module)
        if not dists:
            problems[module] = f"imported by {sorted(files)} but installed by no distribution"
        elif not dists & deps.keys():
            problems[module] = f"imported by {sorted(files)}; provided by {sorted(dists)}, none in [project.dependencies]"
    return problems


def test_every_third_party_import_of_compiler_and_runtime_is_a_declared_dependency():
    imports = third_party_imports(tuple(REPO / s for s in SOURCES))
    # the scan sees imports at module level, inside functions and in try blocks alike
    assert {"ruamel", "jinja2", "litellm", "polars", "reportlab", "pypdf", "jsonschema_rs", "_ruamel_yaml"} <= imports.keys()
    assert undeclared_imports(tuple(REPO / s for s in SOURCES), declared()) == {}


@pytest.mark.parametrize("snippet, module", [
    ("import reportlab.pdfgen.canvas\n", "reportlab"),
    ("def f():\n    from pypdf import PdfReader\n", "pypdf"),
    ("try:\n    import _ruamel_yaml\nexcept ImportError:\n    pass\n", "_ruamel_yaml"),
    ("import jsonschema_rs as rs\n", "jsonschema_rs"),
    ("import no_such_distribution_anywhere\n", "no_such_distribution_anywhere"),
])
def test_the_check_catches_an_undeclared_import_wherever_it_is_written(tmp_path: Path, snippet: str, module: str):
    """The check itself, on a package whose one module imports something pyproject lacks."""
    pkg = tmp_path / "runtime"
    pkg.mkdir()
    (pkg / "mod.py").write_text("import json\nimport lrc.runtime.lock\nimport jinja2\n" + snippet)
    deps = {k: v for k, v in declared().items() if k not in ("reportlab", "pypdf", "ruamel-yaml-clib", "jsonschema-rs")}
    assert module in undeclared_imports((pkg,), deps)
    assert undeclared_imports((pkg,), {**deps, **declared()}).keys() <= {"no_such_distribution_anywhere"}


def test_requirements_in_runtime_section_and_pyproject_declare_the_same_packages():
    runtime, dev = requirements_in()
    deps = declared()
    assert runtime.keys() == deps.keys(), (
        f"only in requirements.in's runtime section: {sorted(runtime.keys() - deps.keys())}; "
        f"only in [project.dependencies]: {sorted(deps.keys() - runtime.keys())}")
    for name, req in runtime.items():
        pins = [s for s in req.specifier if s.operator == "=="]
        assert pins, f"requirements.in: runtime dependency {name} is not pinned (==)"
        assert deps[name].specifier.contains(pins[0].version, prereleases=True), \
            f"requirements.in pins {name}=={pins[0].version}, outside pyproject's {deps[name].specifier}"
    # what tests and builds use is not imported by lrc; what lrc imports is not hidden there
    imported = set().union(*(distributions_of(m) for m in third_party_imports(tuple(REPO / s for s in SOURCES))))
    assert not (dev.keys() & imported), f"imported by lrc but listed as tests-and-builds only: {sorted(dev.keys() & imported)}"


def test_requirements_lock_pins_every_requirement_with_hashes_and_the_same_versions():
    lock = locked()
    runtime, dev = requirements_in()
    deps = declared()
    for name, req in {**runtime, **dev}.items():
        assert name in lock, f"{name} is in requirements.in but not hash-pinned in requirements.lock (re-lock with uv)"
        assert req.specifier.contains(lock[name], prereleases=True), f"requirements.lock has {name}=={lock[name]}, requirements.in wants {req.specifier}"
        if name in deps:
            assert deps[name].specifier.contains(lock[name], prereleases=True), f"requirements.lock's {name}=={lock[name]} is outside pyproject's {deps[name].specifier}"


def test_the_running_environment_has_exactly_the_locked_versions_of_lrcs_dependencies():
    """The venv the suite runs in was installed from requirements.lock (dev.py set-up)."""
    lock = locked()
    for name in declared():
        assert importlib.metadata.version(name) == lock[name], f"{name}: installed {importlib.metadata.version(name)}, locked {lock[name]}"
