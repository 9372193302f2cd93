"""A content-addressed speed-up cache for `lrc compile`, in the project's .lrc-cache/.

What it holds (compiler/units.py explains the per-spec memo): for each spec file, what its
own stages (load, validate, defaults, file inlining, render, digest) made of its exact bytes
and the exact bytes of every file it references; and, keyed by a module's source bytes, what
the code fingerprinting derives from it. Every entry is checked against the bytes on disk
before it is used, so an edit is always seen.

Three rules keep it honest:
- *Namespaced by the toolchain*: a digest of the compiler's own source, the lrc release, the
  Python version and the versions of the libraries whose behaviour results depend on
  (LIBRARIES). Change any of them and the cache is cold.
- *Sealed*: every cache file carries an HMAC under a per-user key kept outside the project
  (~/.cache/lrc/cache.key). Specs arrive in pull requests; a `.lrc-cache/` committed into
  one, mapping a bad spec to a clean result, would otherwise make `lrc compile --check`
  pass it. A file whose seal does not verify is a cold cache, never an error.
- *Disposable*: deleting the folder is always safe; a damaged or unreadable cache is a cold
  cache; a read-only checkout compiles the same, only slower. `--check` reads, never writes.
- *Never through a link*: a committed `.lrc-cache -> ..` (or a link inside it) would make
  saving, which removes other toolchains' folders and unused blobs, delete outside the
  project. A symlinked folder is no cache at all (`refused`; the tree scan warns, LRC7005),
  and saving removes links inside it (the link, never its target) and writes below none.

The runtime never reads it: `lrc execute` verifies fingerprints from the source, through its own
sealed memo keyed by each file's bytes (`lrc.runtime.lock.factmemo`).
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import marshal
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from lrc.compiler.load import linked_folder
from lrc.runtime.lock import sealing
from lrc.runtime.lock.format import LRC_VERSION

FOLDER = ".lrc-cache"
INDEX = "index.bin"
SEAL = 32  # bytes of HMAC-SHA256 in front of every cache file
LIBRARIES = ("jsonschema", "jsonschema-rs", "referencing", "jinja2", "ruamel.yaml", "ruamel.yaml.clib", "rfc8785")
"""Distributions whose behaviour a cached result depends on (validation, templates, YAML)."""


def key_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# The sealing key is shared with the runtime's fingerprint memo (lrc.runtime.lock.sealing).
_key_file = sealing.key_file
_secret = sealing.secret


def _library_versions() -> list[str]:
    """`name-version` of each library in LIBRARIES, read from the dist-info folder names next
    to the installed packages (found without importing them; one directory listing each)."""
    import importlib.util

    found: list[str] = []
    wanted = {name.replace(".", "_").replace("-", "_").lower() for name in LIBRARIES}
    folders: set[str] = set()
    for module, up in (("jsonschema", 2), ("jinja2", 2), ("jsonschema_rs", 2), ("ruamel.yaml", 3)):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        if origin:
            folders.add(str(Path(origin).resolve().parents[up - 1]))
    for folder in sorted(folders):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist = name[: -len(".dist-info")]
                project = dist.rsplit("-", 1)[0].replace(".", "_").replace("-", "_").lower()
                if project in wanted:
                    found.append(dist)
    return sorted(set(found))


def toolchain_digest() -> str:
    """What every cached result depends on besides its inputs: lrc's compiler and lock code,
    the lrc release, the Python version and the libraries' versions."""
    import lrc.compiler
    import lrc.runtime.lock

    h = hashlib.sha256()
    h.update(f"lrc {LRC_VERSION}\0python {sys.version_info[0]}.{sys.version_info[1]}\0{sys.implementation.cache_tag}\0".encode())
    for dist in _library_versions():
        h.update(dist.encode() + b"\0")
    for package in (lrc.compiler, lrc.runtime.lock):
        folder = Path(package.__file__).parent
        for path in sorted(folder.glob("*.py")):
            h.update(path.name.encode() + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


class Cache:
    """The sealed cache of one project: a marshal'd index of namespaces plus blob files.

    Namespaces are dicts filled in place (`namespace`, then mark `dirty`); blobs are larger
    values written to their own files and read only when asked for (`put_blob`,
    `get_blob`)."""

    def __init__(self, root: Path, enabled: bool = True):
        self.root = root
        self.folder = root / FOLDER
        self.refused = self.folder.is_symlink()
        self.enabled = enabled and not os.environ.get("LRC_NO_CACHE") and not self.refused
        self.data: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self._secret: bytes | None = None
        self._pending_blobs: dict[str, bytes] = {}
        self.toolchain = ""
        self.live_blobs: set[str] | None = None  # when set, save() deletes every other blob
        if not self.enabled:
            return
        self._secret = _secret()
        if self._secret is None:
            self.enabled = False
            return
        self.toolchain = toolchain_digest()
        self.path = self.folder / self.toolchain[:24] / INDEX
        raw = self._read_sealed(self.path)
        if raw is not None:
            enabled_gc = gc.isenabled()
            gc.disable()  # a large graph of fresh containers makes the collector run for nothing
            try:
                loaded = marshal.loads(raw)
            except (EOFError, ValueError, TypeError):
                loaded = None
            finally:
                if enabled_gc:
                    gc.enable()
            if isinstance(loaded, dict) and all(isinstance(v, dict) for v in loaded.values()):
                self.data = loaded

    # -- sealing ---------------------------------------------------------------------------
    def _seal(self, payload: bytes) -> bytes:
        assert self._secret is not None
        return hmac.new(self._secret, payload, hashlib.sha256).digest() + payload

    def _read_sealed(self, path: Path) -> bytes | None:
        from lrc.compiler.load import read_regular

        blob = read_regular(path)
        if blob is None:
            return None
        tag, payload = blob[:SEAL], blob[SEAL:]
        if len(tag) != SEAL or self._secret is None:
            return None
        if not hmac.compare_digest(tag, hmac.new(self._secret, payload, hashlib.sha256).digest()):
            return None  # not written by this user's lrc: ignore it
        return payload

    # -- namespaces ------------------------------------------------------------------------
    def namespace(self, name: str) -> dict[str, Any]:
        return self.data.setdefault(name, {})

    # -- blobs -----------------------------------------------------------------------------
    def _blob_path(self, key: str) -> Path:
        return self.folder / self.toolchain[:24] / "blobs" / key[:2] / f"{key}.bin"

    def put_blob(self, value: Any) -> str:
        """Keep `value` (plain data) in a blob of its own; return its key."""
        payload = marshal.dumps(value)
        key = key_of(payload)
        if self.enabled:
            self._pending_blobs[key] = payload
            self.dirty = True
        return key

    def get_blob(self, key: str) -> Any | None:
        if not self.enabled:
            return None
        pending = self._pending_blobs.get(key)
        payload = pending if pending is not None else self._read_sealed(self._blob_path(key))
        if payload is None or key_of(payload) != key:
            return None
        try:
            return marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None

    # -- saving ----------------------------------------------------------------------------
    def save(self) -> None:
        if not (self.enabled and self.dirty) or self.folder.is_symlink():
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for other in os.scandir(self.folder):  # results of another toolchain never serve again
                if other.is_symlink():
                    os.unlink(other.path)  # the link itself; its target is not the cache's
                elif other.is_dir(follow_symlinks=False) and other.name != self.toolchain[:24]:
                    shutil.rmtree(other.path, ignore_errors=True)  # never follows a link inside
                elif other.is_file(follow_symlinks=False) and other.name != ".gitignore":
                    os.unlink(other.path)
            _write_atomic(self.folder / ".gitignore", b"*\n", self.root)
            for key, payload in sorted(self._pending_blobs.items()):
                path = self._blob_path(key)
                if not path.exists():
                    _write_atomic(path, self._seal(payload), self.root)
            self._pending_blobs.clear()
            if self.live_blobs is not None:
                self._prune_blobs(self.live_blobs)
            _write_atomic(self.path, self._seal(marshal.dumps(self.data)), self.root)
        except OSError:
            pass  # a read-only checkout compiles just as well, only slower


    def _prune_blobs(self, live: set[str]) -> None:
        base = self.folder / self.toolchain[:24] / "blobs"
        if linked_folder(self.root, base / "x") is not None or not base.is_dir():
            return
        for shard in os.scandir(base):
            if shard.is_symlink():
                os.unlink(shard.path)  # the link, not what it points to
                continue
            for blob in os.scandir(shard.path) if shard.is_dir(follow_symlinks=False) else ():
                if blob.name.removesuffix(".bin") not in live and not blob.is_dir(follow_symlinks=False):
                    os.unlink(blob.path)


def _write_atomic(path: Path, data: bytes, root: Path) -> None:
    """Write `path` by rename (a link in its place is replaced, not followed), never below a
    symlinked folder of `root`."""
    if linked_folder(root, path) is not None:
        raise OSError(f"{path} is below a symlink")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
