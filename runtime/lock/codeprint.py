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
import gc
import hashlib
import os
import pickle
import re
import select
import sys
import threading
from contextlib import contextmanager
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


_BATCH: dict[tuple, Any] | None = None
"""Lookups shared by the fingerprints of one `batch()` (a compile's or a verify's components
import the same modules: ~2,800 path probes and ~2,600 resolves for 32 components otherwise)."""


@contextmanager
def batch():
    """Fingerprint several components against a tree that does not change meanwhile: module
    paths and resolved file names are looked up once for the whole batch, not per component.
    Outside a batch every lookup asks the filesystem, as before."""
    global _BATCH
    outer = _BATCH
    _BATCH = {} if outer is None else outer
    try:
        yield
    finally:
        _BATCH = outer


def _batched(key: tuple, compute):
    if _BATCH is None:
        return compute()
    if key not in _BATCH:
        _BATCH[key] = compute()
    return _BATCH[key]


def module_path(module: str, root: Path | None = None) -> Path | None:
    """File of an `lrc.runtime.*` module, or None if it is not a runtime module."""
    root = root or runtime_root()
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    return _batched(("module_path", module, str(root)), lambda: _find_module(module, root))


def _find_module(module: str, root: Path) -> Path | None:
    parts = module.split(".")[2:]
    base = root.joinpath(*parts) if parts else root
    if base.with_suffix(".py").is_file() and parts:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _dotted(rel: Path) -> str:
    """The module name of a file at `rel` inside the runtime package."""
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def _lexical_module_name(path: Path, root: Path) -> str:
    """`module_name` of a path found under `root` by rglob, read off the path itself (no
    resolve): for guesses only, where a symlink that makes it differ costs a missed guess."""
    return _dotted(path.relative_to(root))


def module_name(path: Path, root: Path | None = None) -> str:
    root = root or runtime_root()
    return _dotted(path.resolve().relative_to(root.resolve()))


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


@contextmanager
def _no_gc():
    """Cyclic GC paused while syntax trees are built and walked: they hold no cycles, so
    reference counting frees them all the same, and the collector's passes over the many new
    nodes (and every other live object) cost more than the parse itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse(path: Path) -> ast.Module:
    try:
        with _no_gc():
            return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        raise CodeprintError(path, line, f"cannot parse: {exc}") from exc


@dataclass(frozen=True)
class _Facts:
    """What the fingerprinting reads from one module, taken from a single parse."""

    declarations: tuple  # (name, valid value or None, statement line, value line, value column), in order
    imports: tuple  # (module or None, level, names): Import has module None, in `ast.walk` order
    digest: str | None  # file digest of the normalized tree
    error: Exception | None  # raised by `file_digest` instead, if computing the digest failed


def _facts(path: Path) -> _Facts:
    """Parse once and keep only the facts: the tree (hundreds of thousands of nodes over the
    runtime) never outlives this call, so the cyclic GC never walks it, during the compile or at
    exit, and no second parse is needed for discovery, imports or the digest."""
    return _memo("facts", path, lambda: _read_facts(path))


def _read_facts(path: Path) -> _Facts:
    with _no_gc():
        tree = _parse(path)
        declarations = []
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = node.value
                if name == "COMPONENT_ID":
                    ok = isinstance(value, ast.Constant) and isinstance(value.value, str)
                elif name == "COMPONENT_VERSION":
                    ok = isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 1
                else:
                    continue
                declarations.append((name, value.value if ok else None, node.lineno, value.lineno, value.col_offset + 1))
        imports = tuple((node.module if isinstance(node, ast.ImportFrom) else None,
                         node.level if isinstance(node, ast.ImportFrom) else 0,
                         tuple(alias.name for alias in node.names),
                         isinstance(node, ast.ImportFrom)) for node in _import_nodes(tree))
        value = error = None
        try:
            # Numbers in a serialized tree are ints below 2^53 and bools (floats and larger ints
            # are written as their repr), so the canonical form needs no number scan.
            value = digest("code-ast", _serialize_stripped(tree), integers_only=True)
        except Exception as exc:  # noqa: BLE001 - raised where the digest is asked for, as before
            error = _unprintable(path, tree, exc)
        del tree
    return _Facts(tuple(declarations), imports, value, error)


def _unprintable(path: Path, tree: ast.Module, exc: Exception) -> Exception:
    """A module whose tree cannot be digested: a CodeprintError at the string constant that is
    not Unicode text (a lone surrogate, e.g. "\\ud800" in the source), which the compiler reports
    as LRC3009 at its line instead of an internal error; any other failure as it was."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            bad = next((c for c in node.value if 0xD800 <= ord(c) <= 0xDFFF), None)
            if bad is not None:
                return CodeprintError(path, node.lineno, f"cannot fingerprint: a string constant holds a lone surrogate "
                                                         f"(U+{ord(bad):04X}), which is not Unicode text; build it at run "
                                                         f"time instead (chr(0x{ord(bad):04X}))")
    return exc


_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w., \t]*)|import[ \t]+([\w., \t]+))", re.M)
PARALLEL_MIN_FILES = 8
PARALLEL_TIMEOUT_S = 60


def _can_fork() -> bool:
    """A second process may parse: Linux (fork is safe there), single-threaded (no lock another
    thread holds is copied), more than one core, and not turned off (LRC_NO_PARALLEL=1)."""
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and (os.cpu_count() or 1) > 1
            and threading.active_count() == 1 and not os.environ.get("LRC_NO_PARALLEL"))


def _likely_imports(raw: bytes, module: str, is_package: bool) -> set[str]:
    """Runtime modules a source probably imports, read from its import lines by a regex: only
    a guess of what to parse ahead of time, never what the fingerprint covers."""
    out: set[str] = set()
    package = module if is_package else module.rsplit(".", 1)[0]
    for found in _IMPORT_LINE.finditer(raw):
        source, names, plain = (g.decode("ascii", "replace") if g else "" for g in found.groups())
        if plain:
            out.update(n.strip().split(" ")[0] for n in plain.split(",") if n.strip())
            continue
        level = len(source) - len(source.lstrip("."))
        base = source.lstrip(".")
        if level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (level - 1)] if level > 1 else anchor
            base = ".".join(anchor + ([base] if base else []))
        out.add(base)
        out.update(f"{base}.{n.strip().split(' ')[0]}" for n in names.split(",") if n.strip())
    return {m for m in out if m.startswith(PACKAGE)}


_LIKELY: dict[tuple[bytes, str, bool], frozenset[str]] = {}
"""`_likely_imports` by (digest of the source, module, is package): a process that compiles
again (the tests, `lrc diff`'s two trees) guesses again from the same bytes."""


def _likely_imports_of(raw: bytes, module: str, is_package: bool) -> frozenset[str]:
    key = (hashlib.blake2b(raw, digest_size=16).digest(), module, is_package)
    found = _LIKELY.get(key)
    if found is None:
        found = _LIKELY[key] = frozenset(_likely_imports(raw, module, is_package))
    return found


def _prefetch(root: Path, sources: dict[Path, bytes]) -> None:
    """Parse about half of the modules this compile will parse on a second process.

    Parsing the runtime's component modules and their imports is most of a cold compile
    (the second core sits idle meanwhile). The modules are guessed from import lines, split
    in two by size, and the child sends back the same `_Facts` the parent would have computed
    (they are a pure function of the file's bytes). Anything that goes wrong (no fork, a
    failed or slow child, a fact that does not pickle) leaves those files to be parsed here
    later, as before: this only ever saves time."""
    if not _can_fork():
        return
    # Names read off the paths as rglob gave them (no resolve per file): only a guess of what to parse.
    paths = {_lexical_module_name(p, root): p for p in sources}
    # Components whose declaration the supplied map already knows are discovered without a
    # parse, and only the plan's components are then fingerprinted (from the map, where their
    # bytes are known): parsing their whole import closure ahead would be wasted work.
    todo = [p for p, raw in sources.items() if b"COMPONENT_" in raw
            and not (SOURCE_DIGESTS is not None and f"declares:{hashlib.sha256(raw).hexdigest()}" in SOURCE_DIGESTS)]
    needed: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in needed:
            continue
        needed.add(path)
        module = _lexical_module_name(path, root)
        for name in _likely_imports_of(sources[path], module, path.name == "__init__.py"):
            parts = name.split(".")
            for i in range(2, len(parts) + 1):  # parent packages run too
                target = paths.get(".".join(parts[:i]))
                if target is not None and target not in needed:
                    todo.append(target)
    pending = []
    for path in sorted(needed):
        raw = sources[path]
        if SOURCE_DIGESTS is not None and hashlib.sha256(raw).hexdigest() in SOURCE_DIGESTS:
            continue  # the cache knows it: nothing to parse
        st = path.stat()
        if ("facts", str(path), st.st_size, st.st_mtime_ns) not in _MEMO:
            pending.append(path)
    if len(pending) < PARALLEL_MIN_FILES:
        return
    pending.sort(key=lambda p: -len(sources[p]))
    mine, theirs = pending[0::2], pending[1::2]
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:  # pragma: no cover - the child process; exercised by every cold compile
        try:
            os.close(read_end)
            out = []
            for path in theirs:
                try:
                    st = path.stat()
                    facts = _read_facts(path)
                    out.append(pickle.dumps((("facts", str(path), st.st_size, st.st_mtime_ns), facts)))
                except Exception:  # noqa: BLE001 - the parent parses this one itself (and reports it)
                    continue
            with os.fdopen(write_end, "wb") as fh:
                fh.write(pickle.dumps(out))
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        for path in mine:
            _facts(path)
        chunks = []
        deadline = PARALLEL_TIMEOUT_S
        while True:
            ready, _, _ = select.select([read_end], [], [], deadline)
            if not ready:
                os.kill(pid, 9)
                return
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        for item in pickle.loads(b"".join(chunks)) if chunks else []:
            try:
                key, facts = pickle.loads(item)
                path = Path(key[1])
                st = path.stat()
            except Exception:  # noqa: BLE001 - e.g. an error that does not unpickle: parsed here later
                continue
            if key == ("facts", str(path), st.st_size, st.st_mtime_ns):  # unchanged since the child read it
                _MEMO.setdefault(key, facts)
    except Exception:  # noqa: BLE001 - whatever failed is parsed here later
        pass
    finally:
        os.close(read_end)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def discover(root: Path | None = None) -> dict[str, Component]:
    """Every component under the runtime package, keyed by `id.vN`, in sorted order."""
    root = root or runtime_root()
    found: dict[str, Component] = {}
    sources = {path: path.read_bytes() for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}
    _prefetch(root, sources)
    for path, raw in sources.items():
        if b"COMPONENT_" not in raw:  # cheap: most modules declare nothing
            continue
        ckey = f"declares:{hashlib.sha256(raw).hexdigest()}" if SOURCE_DIGESTS is not None else None
        if ckey is not None and ckey in SOURCE_DIGESTS:
            known = SOURCE_DIGESTS[ckey]
            if known is None:  # names COMPONENT_ somewhere but declares nothing
                continue
            ident, version, line, col = known
            comp = Component(ident, version, module_name(path, root), path, line, col)
            if comp.ref in found:
                raise CodeprintError(path, line, f"component {comp.ref} is declared twice ({found[comp.ref].path.name})")
            found[comp.ref] = comp
            continue
        ident = version = None
        vpos = (0, 0)
        for name, value, line, vline, vcol in _facts(path).declarations:
            if name == "COMPONENT_ID":
                if value is not None:
                    ident = value
            else:
                if value is None:
                    raise CodeprintError(path, line, "COMPONENT_VERSION must be a positive integer literal")
                version = value
                vpos = (vline, vcol)
        if ident is None and version is None:
            if ckey is not None:  # remembered too: such a module is not parsed again to learn it
                SOURCE_DIGESTS[ckey] = None
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
    """Reference form of the docstring rule (`_digest_tree` applies it without mutating)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]


def _serialize(node: Any) -> Any:
    """A JSON-able form of an AST that skips empty fields (stable across 3.11-3.13).

    Reference form: `_serialize_stripped` produces the same value in one pass."""
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
        if _is_version_assign(node):
            node.value = ast.Constant(value=None)


def _is_version_assign(node: ast.AST) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "COMPONENT_VERSION")


_DOC_OWNERS = frozenset({ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef})
_PASS = {"_": "Pass"}
_BLANK = {"_": "Constant"}
_SERIALIZERS: dict[type, Any] = {}
"""Per node class, a function made by `_serializer_for` that does what `_serialize` does for
one node of that class (with `_strip_docstrings` applied to the bodies of docstring owners):
the field loop unrolled, since this walk over every node of the runtime was the largest cost
of a cold compile."""


def _without_docstring(body: list) -> list:
    if body:
        first = body[0]
        if first.__class__ is ast.Expr and first.value.__class__ is ast.Constant and isinstance(first.value.value, str):
            return body[1:] or [ast.Pass()]
    return body


def _leaf(value: Any) -> Any:
    """`_serialize` of a field value that is not a str, list or syntax node of a known class."""
    if isinstance(value, ast.AST):
        return _serialize_node(value)
    if isinstance(value, list):
        return [_leaf(v) for v in value]
    if isinstance(value, (bytes, complex, float)):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
        return repr(value)
    if value is Ellipsis:
        return "..."
    return value


def _serialize_node(node: ast.AST) -> dict:
    fn = _SERIALIZERS.get(node.__class__)
    if fn is None:
        fn = _serializer_for(node.__class__)
    return fn(node)


def _serializer_for(cls: type) -> Any:
    # Each field: None is skipped; a str is kept; a list is skipped when empty, else each item is
    # serialized (a node of a known class directly, anything else by `_leaf`, which is
    # `_serialize`); a node is serialized; anything else goes through `_leaf` (`value == []`
    # is kept from `_serialize`, which skipped it).
    items = "[T[x.__class__](x) if x.__class__ in T else L(x) for x in v]"
    lines = ["def serialize(node):", f"    out = {{'_': {cls.__name__!r}}}"]
    for name in cls._fields:
        key = repr(name)
        lines += [f"    v = getattr(node, {key}, None)",
                  "    if v is not None:",
                  "        c = v.__class__",
                  f"        if c is str: out[{key}] = v",
                  "        elif c is list:",
                  "            if v:"]
        if name == "body" and cls in _DOC_OWNERS:  # `_strip_docstrings`: drop a leading string statement
            lines += ["                f = v[0]",
                      "                if f.__class__ is Expr and f.value.__class__ is Constant and isinstance(f.value.value, str):",
                      "                    v = v[1:]",
                      f"                out[{key}] = {items} if v else [PASS]"]
        else:
            lines += [f"                out[{key}] = {items}"]
        lines += [f"        elif c in T: out[{key}] = T[c](v)",
                  "        elif v == []: pass",
                  f"        else: out[{key}] = L(v)"]
    lines.append("    return out")
    namespace = {"T": _SERIALIZERS, "L": _leaf, "PASS": _PASS, "Expr": ast.Expr, "Constant": ast.Constant}
    exec(compile("\n".join(lines), f"<codeprint serializer {cls.__name__}>", "exec"), namespace)  # noqa: S102 - our own text
    _SERIALIZERS[cls] = namespace["serialize"]
    return namespace["serialize"]


def _serialize_stripped(tree: ast.Module) -> Any:
    """`_serialize` of the tree after `_strip_docstrings` and `_blank_version`, in one pass and
    without touching the tree."""
    out = _serialize_node(tree)
    body = _without_docstring(tree.body)
    if any(_is_version_assign(node) for node in body):
        out["body"] = [dict(_serialize_node(node), value=_BLANK) if _is_version_assign(node) else _serialize_node(node)
                       for node in body]
    return out


SOURCE_DIGESTS: dict[str, Any] | None = None
"""Optional content-addressed map a caller may supply: keys embed the sha256 of the source
bytes (file digests, imports, declarations), so an edited file is always a miss and is
recomputed. The compiler supplies its cache's; the runtime's verification its sealed per-user
memo (`lrc.runtime.lock.factmemo`)."""


def file_digest(path: Path) -> str:
    """Digest of one module's normalized syntax tree (docstrings and the version number left out)."""

    def compute() -> str:
        raw = path.read_bytes()
        key = hashlib.sha256(raw).hexdigest() if SOURCE_DIGESTS is not None else None
        if key is not None and key in SOURCE_DIGESTS:
            return SOURCE_DIGESTS[key]
        facts = _facts(path)
        if facts.error is not None:
            raise facts.error
        value = facts.digest
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


_STMT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
"""Fields that hold statements (or except handlers and match cases, whose bodies do): import
statements can only sit below them, never inside an expression."""


def _import_nodes(tree: ast.Module) -> list:
    """The Import/ImportFrom nodes of `tree` in `ast.walk` order (breadth first, children in
    field order), found by visiting statements only: breadth-first order is depth, then
    preorder, and the preorder of a subset keeps its relative order."""
    found: list[tuple[int, ast.AST]] = []
    kinds = (ast.Import, ast.ImportFrom)

    def visit(node: ast.AST, depth: int) -> None:
        for name in node._fields:
            if name in _STMT_LISTS:
                for child in getattr(node, name, None) or ():
                    if isinstance(child, kinds):
                        found.append((depth + 1, child))
                    visit(child, depth + 1)

    visit(tree, 0)
    found.sort(key=lambda item: item[0])  # stable: preorder within a depth
    return [node for _, node in found]


def _scan_imports(path: Path, module: str) -> Iterable[str]:
    facts = _facts(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node_module, level, names, is_from in facts.imports:
        if not is_from:
            yield from names
        else:
            if level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (level - 1)]
                base = ".".join(base_parts + ([node_module] if node_module else []))
            else:
                base = node_module or ""
            yield base
            for name in names:
                yield f"{base}.{name}"


def _runs(name: str, root: Path) -> list[tuple[Path, str]]:
    """(file, module) of every runtime module importing `name` runs, in order: importing a.b.c
    runs the __init__ of every parent package too. Looked up once per name in a batch (a
    compile's closures push the same few hundred names thousands of times)."""

    def compute() -> list[tuple[Path, str]]:
        parts = name.split(".")
        found = []
        for i in range(2, len(parts) + 1):
            candidate = ".".join(parts[:i])
            path = module_path(candidate, root)
            if path is not None:
                found.append((path, candidate))
        return found

    return _batched(("runs", name, str(root)), compute)


def closure(module: str, root: Path | None = None) -> list[Path]:
    """The module's file, its parent packages' __init__ files and every runtime module it imports, transitively."""
    root = root or runtime_root()
    seen: dict[Path, str] = {}
    expanded: set[str] = set()  # a name expanded once put all its files in `seen`: again is a no-op
    todo = [module]
    while todo:
        name = todo.pop()
        if name in expanded:
            continue
        expanded.add(name)
        for path, candidate in _runs(name, root):
            if path in seen:
                continue
            seen[path] = candidate
            todo.extend(_batched(("imports", str(path), candidate), lambda p=path, c=candidate: list(_imports(p, c))))
    return sorted(seen, key=lambda p: p.as_posix())


def fingerprint(component: Component, root: Path | None = None) -> CodePrint:
    """Fingerprint of a component: its own tree plus its transitive project imports.

    The version is deliberately outside it: the gate compares fingerprints across versions
    (a bump with no behaviour change is reported), and the lock records the version beside it.
    """
    root = root or runtime_root()
    base = _batched(("resolve", str(root.parent)), root.parent.resolve)
    files = {_batched(("relative", str(p), str(base)), lambda p=p: p.resolve().relative_to(base).as_posix()):
             _batched(("digest", str(p)), lambda p=p: file_digest(p))
             for p in closure(component.module, root)}
    files = dict(sorted(files.items()))
    value = {"id": component.id, "files": files}
    return CodePrint(digest("code", value), files)
