"""Code components and their fingerprints.

Generators, validators, tools, systems and reference models are code, versioned like specs.
A module declares itself a component with two module-level constants:

    COMPONENT_ID = "triage.ap-inbox.generator"
    COMPONENT_VERSION = 1

Its fingerprint covers the module and every project module it imports, transitively (a
change in a shared helper is a change in every component that uses it). Source is compared
as a normalized syntax tree — comments, formatting and docstrings do not count — and
serialized field by field so the fingerprint does not depend on the Python minor version's
`ast.dump` quirks. Everything here is static: nothing is imported, so the compiler can
fingerprint runtime code without loading it.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from lrc.runtime.lock.canonical import digest

PACKAGE = "lrc.runtime"
"""Import name of the runtime package; components live below it."""


def runtime_root() -> Path:
    """The folder of the `lrc.runtime` package (the repository's `runtime/`)."""
    return Path(__file__).resolve().parent.parent


def project_root() -> Path:
    return runtime_root().parent


@dataclass(frozen=True)
class Component:
    """A versioned piece of code, found by its COMPONENT_ID/COMPONENT_VERSION constants."""

    id: str
    version: int
    module: str
    path: Path
    version_line: int  # 1-based line of `COMPONENT_VERSION = N`
    version_col: int  # 1-based column of the value N

    @property
    def ref(self) -> str:
        return f"{self.id}.v{self.version}"


@dataclass(frozen=True)
class CodePrint:
    """A component's fingerprint and the per-file digests behind it."""

    fingerprint: str
    files: dict[str, str]


class CodeprintError(Exception):
    """A component module that cannot be parsed or declares itself badly."""

    def __init__(self, path: Path, line: int, message: str):
        super().__init__(message)
        self.path = path
        self.line = line
        self.message = message


def module_path(module: str, root: Path | None = None) -> Path | None:
    """File of an `lrc.runtime.*` module, or None if it is not a runtime module."""
    root = root or runtime_root()
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[2:]
    base = root.joinpath(*parts) if parts else root
    if base.with_suffix(".py").is_file() and parts:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def module_name(path: Path, root: Path | None = None) -> str:
    root = root or runtime_root()
    rel = path.resolve().relative_to(root.resolve())
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


_MEMO: dict[tuple, Any] = {}
"""Per-process memo keyed by (what, path, size, mtime_ns): every component's closure shares
modules, and re-parsing them for each component dominated compile time. A changed file gets
a new key, so the memo can never serve a stale digest."""


def _memo(what: str, path: Path, compute):
    st = path.stat()
    key = (what, str(path), st.st_size, st.st_mtime_ns)
    if key not in _MEMO:
        _MEMO[key] = compute()
    return _MEMO[key]


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        raise CodeprintError(path, line, f"cannot parse: {exc}") from exc


def discover(root: Path | None = None) -> dict[str, Component]:
    """Every component under the runtime package, keyed by `id.vN`, in sorted order."""
    root = root or runtime_root()
    found: dict[str, Component] = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        raw = path.read_bytes()
        if b"COMPONENT_" not in raw:  # cheap: most modules declare nothing
            continue
        ckey = f"declares:{hashlib.sha256(raw).hexdigest()}" if SOURCE_DIGESTS is not None else None
        if ckey is not None and ckey in SOURCE_DIGESTS:
            ident, version, line, col = SOURCE_DIGESTS[ckey]
            comp = Component(ident, version, module_name(path, root), path, line, col)
            if comp.ref in found:
                raise CodeprintError(path, line, f"component {comp.ref} is declared twice ({found[comp.ref].path.name})")
            found[comp.ref] = comp
            continue
        tree = _parse(path)
        ident = version = None
        vpos = (0, 0)
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = node.value
                if name == "COMPONENT_ID" and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    ident = value.value
                elif name == "COMPONENT_VERSION":
                    if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 1):
                        raise CodeprintError(path, node.lineno, "COMPONENT_VERSION must be a positive integer literal")
                    version = value.value
                    vpos = (value.lineno, value.col_offset + 1)
        if ident is None and version is None:
            continue
        if ident is None or version is None:
            raise CodeprintError(path, vpos[0] or 1, "a component module needs both COMPONENT_ID and COMPONENT_VERSION")
        comp = Component(ident, version, module_name(path, root), path, vpos[0], vpos[1])
        if ckey is not None:
            SOURCE_DIGESTS[ckey] = [ident, version, vpos[0], vpos[1]]
        if comp.ref in found:
            raise CodeprintError(path, vpos[0], f"component {comp.ref} is declared twice ({found[comp.ref].path.name})")
        found[comp.ref] = comp
    return dict(sorted(found.items()))


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]


def _serialize(node: Any) -> Any:
    """A JSON-able form of an AST that skips empty fields (stable across 3.11-3.13)."""
    if isinstance(node, ast.AST):
        out: dict[str, Any] = {"_": type(node).__name__}
        for field in node._fields:
            value = getattr(node, field, None)
            if value is None or value == []:
                continue
            out[field] = _serialize(value)
        return out
    if isinstance(node, list):
        return [_serialize(v) for v in node]
    if isinstance(node, (bytes, complex, float)):
        return repr(node)
    if isinstance(node, int) and not isinstance(node, bool) and abs(node) >= 2**53:
        return repr(node)
    if node is Ellipsis:
        return "..."
    return node


def _blank_version(tree: ast.Module) -> None:
    """The version number is not behaviour: a bump alone must not change the fingerprint."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "COMPONENT_VERSION"):
            node.value = ast.Constant(value=None)


SOURCE_DIGESTS: dict[str, Any] | None = None
"""Optional content-addressed map a caller may supply (the compiler's cache): keys embed the
sha256 of the source bytes (file digests, imports, declarations). The runtime never sets it:
verification always recomputes from the source."""


def file_digest(path: Path) -> str:
    """Digest of one module's normalized syntax tree (docstrings and the version number left out)."""

    def compute() -> str:
        raw = path.read_bytes()
        key = hashlib.sha256(raw).hexdigest() if SOURCE_DIGESTS is not None else None
        if key is not None and key in SOURCE_DIGESTS:
            return SOURCE_DIGESTS[key]
        tree = _parse(path)
        _strip_docstrings(tree)
        _blank_version(tree)
        value = digest("code-ast", _serialize(tree))
        if key is not None:
            SOURCE_DIGESTS[key] = value
        return value

    return _memo("digest", path, compute)


def _imports(path: Path, module: str) -> Iterable[str]:
    def compute() -> list[str]:
        if SOURCE_DIGESTS is None:
            return list(_scan_imports(path, module))
        key = f"imports:{module}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
        if key not in SOURCE_DIGESTS:
            SOURCE_DIGESTS[key] = list(_scan_imports(path, module))
        return SOURCE_DIGESTS[key]

    return _memo("imports", path, compute)


def _scan_imports(path: Path, module: str) -> Iterable[str]:
    tree = _parse(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"


def closure(module: str, root: Path | None = None) -> list[Path]:
    """The module's file, its parent packages' __init__ files and every runtime module it imports, transitively."""
    root = root or runtime_root()
    seen: dict[Path, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        # Importing a.b.c runs the __init__ of every parent package too.
        for i in range(2, len(parts) + 1):
            candidate = ".".join(parts[:i])
            path = module_path(candidate, root)
            if path is None or path in seen:
                continue
            seen[path] = candidate
            todo.extend(_imports(path, candidate))
    return sorted(seen, key=lambda p: p.as_posix())


def fingerprint(component: Component, root: Path | None = None) -> CodePrint:
    """Fingerprint of a component: its own tree plus its transitive project imports.

    The version is deliberately outside it: the gate compares fingerprints across versions
    (a bump with no behaviour change is reported), and the lock records the version beside it.
    """
    root = root or runtime_root()
    base = root.parent
    files = {p.resolve().relative_to(base.resolve()).as_posix(): file_digest(p) for p in closure(component.module, root)}
    files = dict(sorted(files.items()))
    value = {"id": component.id, "files": files}
    return CodePrint(digest("code", value), files)
