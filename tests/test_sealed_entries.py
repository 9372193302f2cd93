"""The storage the sealed per-user memos share (lrc.runtime.lock.sealed_entries): entries are read
without ever waiting on what is planted in their place, and a memo's folder stays bounded,
removing what was used least recently first."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lrc.runtime.filebytes import read_regular
from lrc.runtime.lock.sealed_entries import SealedEntries

from helpers.memos import entries, private_user_cache


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_user_cache(tmp_path, monkeypatch, "test-memo")


def test_a_fifo_or_a_link_in_an_entrys_place_is_a_miss_never_waited_on(folder, tmp_path):
    store = SealedEntries("test-memo", 1 << 20)
    store.write("a", {"v": 1})
    store.write("b", {"v": 2})
    assert store.read("a") == {"key": "a", "v": 1}
    store.path("a").unlink()
    os.mkfifo(store.path("a"))
    target = tmp_path / "elsewhere.bin"
    target.write_bytes(store.path("b").read_bytes())
    store.path("b").unlink()
    store.path("b").symlink_to(target)
    got: list = []
    reader = threading.Thread(target=lambda: got.extend([store.read("a"), store.read("b")]), daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "a read waited on a FIFO"
    assert got == [None, None]


def test_read_regular_takes_only_a_regular_file_of_the_size_asked(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert read_regular(path) == b"12345" == read_regular(path, size=5) == read_regular(path, limit=5)
    assert read_regular(path, size=4) is None and read_regular(path, limit=4) is None
    assert read_regular(tmp_path) is None and read_regular(tmp_path / "absent") is None


def _fill(store: SealedEntries, names: list[str], size: int) -> None:
    for i, name in enumerate(names):
        store.write(name, {"pad": "x" * size})
        os.utime(store.path(name), ns=(10**18 + i * 10**9, 10**18 + i * 10**9))  # written in this order, a second apart


def test_the_folder_is_bounded_and_keeps_what_was_used_last(folder):
    cap = 40_000
    names = [f"e{i:02d}" for i in range(12)]
    _fill(SealedEntries("test-memo", 1 << 20, max_total_bytes=10**9), names, 4_000)  # ~48 KB: above the cap below
    blob = folder / "blobs" / "old-file"
    blob.parent.mkdir()
    blob.write_bytes(b"b" * 3_000)
    os.utime(blob, ns=(10**17, 10**17))  # the oldest of all
    reader = SealedEntries("test-memo", 1 << 20, max_total_bytes=cap)
    assert reader.read("e00") is not None  # the oldest entry, used now: kept
    writer = SealedEntries("test-memo", 1 << 20, max_total_bytes=cap)  # another process
    writer.write("new", {"pad": "y"})
    left = {p.stem for p in entries(folder)}
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total <= cap
    assert not blob.exists()  # subfolders are bounded too
    assert {"e00", "new", "e11"} <= left  # just used, just written, the newest
    assert "e01" not in left and "e02" not in left  # the least recently used went first
    assert reader.read("e00") is not None and writer.read("new") is not None


def test_a_folder_below_its_bound_loses_nothing(folder):
    store = SealedEntries("test-memo", 1 << 20, max_total_bytes=10**6)
    _fill(store, [f"e{i}" for i in range(5)], 1_000)
    SealedEntries("test-memo", 1 << 20, max_total_bytes=10**6).write("new", {"pad": "y"})
    assert len(entries(folder)) == 6
