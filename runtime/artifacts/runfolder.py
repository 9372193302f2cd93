"""A run's private folder: the only place the artifact toolbox reads or writes a file.

Why: an agent edits a *copy* of the task's input, never the input itself, and every path it
names is hostile. The rules are those of `checks.filesandbox` (the project's one file
sandbox): a name passes `clean_path` (no absolute path, `..`, backslash, drive letter,
control character) and must be one the folder's manifest lists — the task's files, by name,
never a directory walk. On disk, every component is opened relative to the folder's
descriptor with O_NOFOLLOW (a symlink planted in the folder is refused, never followed), a
read must be a regular file under a size cap, and a write goes to a fresh temporary file in
the folder that is then renamed over the old one (so a reader never sees half a file, and a
symlink in the target's place is replaced, not written through).

`filesandbox.DirectorySandbox` reads text pages against a digest manifest; this folder reads
and writes whole binary files, and its digests change as the run saves, so it is its own
small class built on the same `clean_path`. Errors are `FolderRefused` with a message the
toolbox turns into a tool result.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Mapping

from lrc.runtime.checks.filesandbox import PathRefused, clean_path

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class FolderRefused(Exception):
    """A name or file the run folder refuses (the message says why)."""


class RunFolder:
    """Files named by a manifest, flat in one folder: `read(name)` and `write(name, data)`.

    Names are single components (the task's files are `model.xlsx`, `deck.pptx`); a nested
    name is refused rather than creating folders an agent could play with."""

    def __init__(self, root: Path, files: Mapping[str, bytes], *, max_file_bytes: int):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.root = self.root.resolve(strict=True)
        self.max_file_bytes = max_file_bytes
        self._names: dict[str, str] = {}
        for name in sorted(files):
            canonical = self.name(name)  # a bad task file name is a programming error: raise
            self._names[canonical] = canonical
        for name in sorted(files):
            self.write(name, files[name])

    def name(self, path: object) -> str:
        """The canonical name of `path`, or FolderRefused."""
        try:
            parts = clean_path(path)
        except PathRefused as exc:
            raise FolderRefused(f"path refused: {exc}") from None
        if len(parts) != 1:
            raise FolderRefused("path refused: the run's files are flat; name a file as list_files shows it")
        return parts[0]

    def listed(self, path: object) -> str:
        """The canonical name of a file the manifest lists, or FolderRefused."""
        name = self.name(path)
        if name not in self._names:
            raise FolderRefused(f"no such file: {name}; the run's files are {', '.join(sorted(self._names)) or 'none'}")
        return name

    def names(self) -> list[str]:
        return sorted(self._names)

    def _dir(self) -> int:
        try:
            return os.open(self.root, _DIR_FLAGS)
        except OSError as exc:
            raise FolderRefused(f"the run folder cannot be opened ({exc.strerror})") from None

    def read(self, path: object) -> bytes:
        name = self.listed(path)
        dfd = self._dir()
        try:
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
            except OSError as exc:
                why = "a symlink is never followed" if exc.errno in (errno.ELOOP, errno.EMLINK) else exc.strerror
                raise FolderRefused(f"{name} cannot be opened ({why})") from None
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    raise FolderRefused(f"{name} is not a regular file")
                if info.st_size > self.max_file_bytes:
                    raise FolderRefused(f"{name} is {info.st_size:,} bytes, over the {self.max_file_bytes:,}-byte limit")
                chunks, remaining = [], self.max_file_bytes + 1
                while remaining > 0:
                    chunk = os.read(fd, min(65_536, remaining))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    remaining -= len(chunk)
                data = b"".join(chunks)
                if len(data) > self.max_file_bytes:
                    raise FolderRefused(f"{name} grew over the {self.max_file_bytes:,}-byte limit while being read")
                return data
            finally:
                os.close(fd)
        finally:
            os.close(dfd)

    def write(self, path: object, data: bytes) -> None:
        name = self.listed(path)
        if not isinstance(data, bytes):
            raise FolderRefused(f"{name}: only bytes are written")
        if len(data) > self.max_file_bytes:
            raise FolderRefused(f"{name} would be {len(data):,} bytes, over the {self.max_file_bytes:,}-byte limit")
        temp = f".{name}.partial"
        dfd = self._dir()
        try:
            try:
                os.unlink(temp, dir_fd=dfd)
            except FileNotFoundError:
                pass
            try:
                fd = os.open(temp, _WRITE_FLAGS, 0o600, dir_fd=dfd)
            except OSError as exc:
                raise FolderRefused(f"{name} cannot be written ({exc.strerror})") from None
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)  # replaces a planted symlink, never follows it
        finally:
            os.close(dfd)
