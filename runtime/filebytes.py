"""Whether a file lrc is about to write already holds the bytes: one open, and never a wait.

Why: `lrc report` and `lrc execute` compare every output with what is on disk before writing
it (a run folder is rewritten in place; an item file must hold exactly the generator's bytes).
`Path.exists()` then `read_bytes()` is two lookups and a Python file object (an fstat, an ioctl
and an lseek more) per file -- three files a run -- and it waits forever on a FIFO planted
where a file should be. Here the file is opened once, without blocking, and read only when it
is a regular file of the expected size.
"""

from __future__ import annotations

import os
import stat


def holds(name: str | os.PathLike, data: bytes) -> bool | None:
    """None if there is no such file; True if it is a regular file holding exactly `data`;
    False otherwise (other bytes, another size, a FIFO, a device or a folder in its place)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        return _read_exactly(fd, len(data)) == data
    finally:
        os.close(fd)


def read_regular(path: str | os.PathLike, size: int | None = None, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file at `path` (exactly `size` bytes, or at most `limit`), else
    None: absent, a link, a FIFO or a device (opened without blocking: never waited on), another
    size, or unreadable. For files lrc reads back from its own caches."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (size is not None and st.st_size != size) \
                or (limit is not None and st.st_size > limit):
            return None
        return _read_exactly(fd, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


class NotRegular(OSError):
    """A path that holds a FIFO, a device, a socket or a folder where a file was expected, or a
    file over the reader's limit: never read (a FIFO would be waited on forever, /dev/zero read
    until memory ran out)."""


class TooLarge(NotRegular):
    """A regular file over the reader's limit (or one that grew over it while read)."""


def open_regular(path: str | os.PathLike, limit: int | None) -> tuple[int, int]:
    """(fd, size) of the regular file at `path`, opened without blocking; NotRegular otherwise
    (for readers that stream a file, a package or a lock, rather than read it whole).
    FileNotFoundError and the other OSErrors of the open pass through."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{os.fspath(path)} is not a regular file (a FIFO, a device or a folder)")
        if limit is not None and st.st_size > limit:
            raise TooLarge(f"{os.fspath(path)} holds {st.st_size:,} bytes, over the {limit:,}-byte limit")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_whole(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """Every byte of the regular file at `path` (at most `limit`): for files lrc reads whole from
    a folder that may come from elsewhere (a journal, a summary). NotRegular for anything else."""
    fd, size = open_regular(path, limit)
    try:
        chunks, total = [], 0
        while chunk := os.read(fd, max(1 << 20, size - total + 1)):
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:  # it grew while being read
                raise TooLarge(f"{os.fspath(path)} grew over the {limit:,}-byte limit while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def first_line(path: str | os.PathLike, limit: int = 1 << 20) -> bytes:
    """The first line of the regular file at `path` (without reading past `limit` bytes): a
    journal's header. NotRegular when the file is not a regular one."""
    fd, _ = open_regular(path, None)
    try:
        chunks, total = [], 0
        while total < limit and (chunk := os.read(fd, min(65536, limit - total))):
            cut = chunk.find(b"\n")
            if cut >= 0:
                chunks.append(chunk[: cut + 1])
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_exactly(fd: int, size: int) -> bytes | None:
    """The `size` bytes of an open file, or None when it holds another number of bytes (one byte
    more than expected is asked for: a file that grew since it was measured is not the same)."""
    chunks, left = [], size + 1
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    return data if len(data) == size else None


_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def write_replacing(name: str | os.PathLike, data: bytes) -> None:
    """Put `data` at `name` through a temporary file of this process and a rename, so a kill
    never leaves half a file. The temporary name (`.<name>.<pid>.tmp`) is created anew
    (O_EXCL, O_NOFOLLOW): whatever sits there -- a file a killed process of the same pid left, a
    link planted to write elsewhere, a FIFO that an open for writing would wait on -- is removed,
    never opened. Its folder is made only when the create fails for want of it; the temporary
    file is removed only if the write failed. Six system calls for a new file, the lrc outputs'
    hot path (`lrc.runtime.report.outputs`) and the items' (`lrc.runtime.items`) alike."""
    name = os.fspath(name)
    folder, base = os.path.split(name)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, _TMP_FLAGS, 0o666)
    except FileNotFoundError:
        os.makedirs(folder or ".", exist_ok=True)
        fd = os.open(tmp, _TMP_FLAGS, 0o666)
    except FileExistsError:
        os.unlink(tmp)  # a link or a FIFO is removed, not followed or opened
        fd = os.open(tmp, _TMP_FLAGS, 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class IsAnInput(OSError):
    """The file named as an output is one the command reads (its plan.lock, a run folder's
    journal): writing it would destroy the input."""


def put_output(name: str | os.PathLike, data: bytes, inputs: tuple[str | os.PathLike, ...] = (),
               inside: tuple[str | os.PathLike, ...] = ()) -> None:
    """A file the user named on the command line (`--out`, `--html-out`): written whole through
    `write_replacing`, so never through a link planted at the temporary name, never half. What
    sits at the name must be a regular file or a link (the link is replaced, its target left as
    it is); a device, a FIFO, a socket or a folder there is NotRegular, nothing written: renamed
    over by root, /dev/null became a regular file and every later `> /dev/null` on the machine
    filled it. `inputs`: files the command reads (the plan.lock), `inside`: folders it reads (a
    run folder): the output may be none of them, nor lie in them (IsAnInput) -- `--html-out` the
    lock itself replaced the lock with a page, a review workbook written as journal.jsonl
    destroyed the run."""
    target = os.path.realpath(name)
    for given in inputs:
        if os.path.exists(given) and os.path.realpath(given) == target:
            raise IsAnInput(f"{os.fspath(name)} is {os.fspath(given)}, which this command reads; name a new file")
    for folder in inside:
        root = os.path.realpath(folder)
        if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
            raise IsAnInput(f"{os.fspath(name)} is inside {os.fspath(folder)}, the folder this command reads; write it elsewhere")
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        pass
    else:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise NotRegular(f"{os.fspath(name)} is not a regular file (a device, a FIFO or a folder); name a new file")
    write_replacing(name, data)
