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
        chunks, left = [], len(data) + 1  # one byte more than expected: a file that grew is not the same
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks) == data
    finally:
        os.close(fd)
