"""File reads confined to an item's own listed files: the agent tools' only way to read files.

The allow-list is a manifest, never a directory walk: a path is readable only if, after it
is cleaned and split into components, it names an entry of the manifest — compared as a
tuple of components, never as a string prefix (so `docs_evil/x` is not inside `docs/`).
Cleaning refuses, rather than repairs: absolute paths, drive letters, backslashes, NUL and
control characters, `..` anywhere (even when it would stay inside), and over-long paths.
Percent-escapes are not decoded and look-alike characters are not folded, so `%2e%2e` and
`．．` are just names that are not in the manifest.

Two backends share those rules:

- `FileSandbox` (what agent tools use): the manifest holds the bytes themselves (an Item's
  `files`). Nothing touches the file system, so no path trick can reach it.
- `DirectorySandbox`: files on disk under a root, with a manifest of sha256 digests. Every
  component is opened relative to its parent's descriptor with O_NOFOLLOW (a symlink
  anywhere on the way — file or directory, inside the root or not — is refused), the file
  must be a regular file (no FIFOs or devices; opened non-blocking), its size is capped,
  and its content must match the manifest digest, so a file swapped on disk is refused.

Reads are paged: at most `max_read_bytes` per call, with the offset of the next page.
Errors are values (`FileRead.ok` false with a message), never exceptions into a run.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

MAX_PATH_CHARS = 256
DEFAULT_MAX_READ_BYTES = 16_384
DEFAULT_MAX_FILE_BYTES = 1_000_000


class PathRefused(ValueError):
    """A path that is not a clean relative path (the message says why)."""


def clean_path(path: object) -> tuple[str, ...]:
    """The components of a clean relative path; raises PathRefused otherwise."""
    if not isinstance(path, str):
        raise PathRefused("the path must be a string")
    if not path or not path.strip():
        raise PathRefused("the path is empty")
    if len(path) > MAX_PATH_CHARS:
        raise PathRefused(f"the path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in path:
        raise PathRefused("the path contains a NUL character")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise PathRefused("the path contains a control character")
    if "\\" in path:
        raise PathRefused("use forward slashes: backslashes are not allowed in paths")
    if path.startswith("/") or path.startswith("~"):
        raise PathRefused("absolute paths are not allowed: give a path relative to the documents folder")
    if len(path) >= 2 and path[1] == ":":
        raise PathRefused("drive-letter paths are not allowed")
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if any(p == ".." for p in parts):
        raise PathRefused("'..' is not allowed in paths")
    if not parts:
        raise PathRefused("the path names no file")
    return parts


@dataclass(frozen=True)
class FileRead:
    ok: bool
    path: str = ""
    text: str = ""
    offset: int = 0
    size: int = 0
    next_offset: int | None = None  # None when the file was read to its end
    error: str | None = None

    @property
    def truncated(self) -> bool:
        return self.next_offset is not None


def _page(path: str, data: bytes, offset: object, max_read: int) -> FileRead:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        return FileRead(False, path, error="offset must be a non-negative integer")
    if offset > len(data):
        return FileRead(False, path, error=f"offset {offset} is past the end of {path} ({len(data)} bytes)")
    end = min(len(data), offset + max_read)
    text = data[offset:end].decode("utf-8", errors="replace")
    return FileRead(True, path, text, offset, len(data), end if end < len(data) else None)


class FileSandbox:
    """Read-only access to an in-memory manifest {relative path: bytes}."""

    def __init__(self, files: Mapping[str, bytes], *, max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
                 max_file_bytes: int = DEFAULT_MAX_FILE_BYTES):
        self.max_read_bytes = max_read_bytes
        self.max_file_bytes = max_file_bytes
        self._files: dict[tuple[str, ...], tuple[str, bytes]] = {}
        for name, data in files.items():
            parts = clean_path(name)  # a bad manifest entry is a programming error: raise
            if not isinstance(data, bytes):
                raise TypeError(f"{name}: file content must be bytes")
            self._files[parts] = ("/".join(parts), data)

    def listing(self) -> list[tuple[str, int]]:
        """(path, size) of every readable file, sorted by path."""
        return sorted((name, len(data)) for name, data in self._files.values())

    def read(self, path: object, offset: object = 0) -> FileRead:
        try:
            parts = clean_path(path)
        except PathRefused as exc:
            return FileRead(False, str(path)[:MAX_PATH_CHARS], error=f"path refused: {exc}")
        found = self._files.get(parts)
        if found is None:
            return FileRead(False, "/".join(parts), error=f"no such document: {'/'.join(parts)}; readable documents are the ones listed in the task")
        name, data = found
        if len(data) > self.max_file_bytes:
            return FileRead(False, name, size=len(data), error=f"{name} is larger than {self.max_file_bytes} bytes")
        return _page(name, data, offset, self.max_read_bytes)


class DirectorySandbox:
    """Read-only access to files under `root` that a manifest {relative path: 'sha256:<hex>'} lists."""

    def __init__(self, root: Path, manifest: Mapping[str, str], *, max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
                 max_file_bytes: int = DEFAULT_MAX_FILE_BYTES):
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(str(root))
        self.max_read_bytes = max_read_bytes
        self.max_file_bytes = max_file_bytes
        self._manifest: dict[tuple[str, ...], tuple[str, str]] = {}
        for name, digest in manifest.items():
            parts = clean_path(name)
            self._manifest[parts] = ("/".join(parts), digest)

    def read(self, path: object, offset: object = 0) -> FileRead:
        try:
            parts = clean_path(path)
        except PathRefused as exc:
            return FileRead(False, str(path)[:MAX_PATH_CHARS], error=f"path refused: {exc}")
        listed = self._manifest.get(parts)
        name = "/".join(parts)
        if listed is None:
            return FileRead(False, name, error=f"no such document: {name}")
        try:
            data = self._open_read(parts)
        except _Refused as exc:
            return FileRead(False, name, error=str(exc))
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed[1]:
            return FileRead(False, name, error=f"{name} does not match its manifest digest; refused")
        return _page(name, data, offset, self.max_read_bytes)

    def _open_read(self, parts: tuple[str, ...]) -> bytes:
        flags_dir = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        flags_file = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fds: list[int] = []
        try:
            fd = os.open(self.root, flags_dir)
            fds.append(fd)
            for part in parts[:-1]:
                try:
                    fd = os.open(part, flags_dir, dir_fd=fd)
                except OSError as exc:
                    raise _Refused(f"{'/'.join(parts)}: folder {part!r} cannot be opened "
                                   f"({'a symlink or not a folder' if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) else exc.strerror})") from None
                fds.append(fd)
            try:
                fd = os.open(parts[-1], flags_file, dir_fd=fd)
            except OSError as exc:
                raise _Refused(f"{'/'.join(parts)} cannot be opened "
                               f"({'a symlink' if exc.errno in (errno.ELOOP, errno.EMLINK) else exc.strerror})") from None
            fds.append(fd)
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _Refused(f"{'/'.join(parts)} is not a regular file")
            if info.st_size > self.max_file_bytes:
                raise _Refused(f"{'/'.join(parts)} is larger than {self.max_file_bytes} bytes")
            real = Path(os.path.realpath(self.root.joinpath(*parts)))
            if not real.is_relative_to(self.root):  # component-wise, belt and braces
                raise _Refused(f"{'/'.join(parts)} resolves outside the documents folder")
            chunks = []
            remaining = self.max_file_bytes + 1
            while remaining > 0:
                chunk = os.read(fd, min(65536, remaining))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
            if len(data) > self.max_file_bytes:
                raise _Refused(f"{'/'.join(parts)} is larger than {self.max_file_bytes} bytes")
            return data
        finally:
            for fd in reversed(fds):
                os.close(fd)


class _Refused(Exception):
    pass
