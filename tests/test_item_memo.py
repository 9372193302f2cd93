"""The sealed per-user memo of generated items (lrc.runtime.item_memo).

It may only ever save time: a remembered item is exactly what its generator returns (the same
context and answer key, key order included, the same files byte for byte); the generator's
locked code, the seed, the index, the parameters and the file-writing libraries are in the
key; an entry not sealed by this user, or a file whose bytes are not the ones the entry names
(replaced, missing, a FIFO planted in their place), is a miss; an item that would not read
back exactly is never remembered; a held-out seed never reaches the cache; off (LRC_NO_CACHE,
`lrc verify`) it neither reads nor writes.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import threading
from pathlib import Path

import pytest

from lrc.runtime import items as item_gen
from lrc.runtime.item_memo import ItemMemo
from lrc.runtime.lock import sealing
from lrc.runtime.workloads.base import Item

from helpers.memos import SEAL_DAMAGE, bump_library_version, damage_entry, entries, private_user_cache
from support import pinned

WORKLOADS = (pinned("triage.ap-inbox"), pinned("extract.invoice"))  # one without files, one with a PDF per item


@pytest.fixture(scope="module")
def plan(small_demo_run):
    """The small demo's plan, cut to two workloads at two items each."""
    lock_path, _, res = small_demo_run
    assert res.returncode == 0, res.stderr
    plan = copy.deepcopy(json.loads(lock_path.read_text(encoding="utf-8"))["plan"])
    plan["workloads"] = {ref: wl for ref, wl in plan["workloads"].items() if ref in WORKLOADS}
    assert set(plan["workloads"]) == set(WORKLOADS)
    plan["edition"]["spec"]["n_per_cell"] = 2
    plan.pop("tasks", None)
    return plan


SEED = "item-memo-test-seed"


def fresh(plan: dict, seed: str = SEED) -> dict:
    return item_gen.generate(plan, seed, memo=False)


def same(a: dict, b: dict) -> None:
    """The same items: fields, types, key order (their JSON text) and file bytes."""
    assert list(a) == list(b)
    for ref in a:
        for x, y in zip(a[ref], b[ref], strict=True):
            assert type(x) is type(y) is Item
            assert (x.index, x.item_id, x.files) == (y.index, y.item_id, y.files)
            assert json.dumps(x.context) == json.dumps(y.context) and json.dumps(x.answer_key) == json.dumps(y.answer_key)


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_user_cache(tmp_path, monkeypatch, "items")


def test_a_second_generation_is_all_hits_and_exactly_the_generators_items(plan, user_cache, monkeypatch):
    calls = []
    real = ItemMemo.item

    def counting(self, generator, index, params, compute):
        found = real(self, generator, index, params, compute)
        calls.append((self.hits, self.misses))
        return found

    monkeypatch.setattr(ItemMemo, "item", counting)
    first = item_gen.generate(plan, SEED)
    assert calls[-1] == (0, 4)
    again = item_gen.generate(plan, SEED)
    assert calls[-1] == (4, 0)
    expected = fresh(plan)
    same(first, expected)
    same(again, expected)
    assert any(i.files for i in again[pinned("extract.invoice")])
    assert len(entries(user_cache)) == 4
    assert len(list((user_cache / "blobs").iterdir())) == sum(len(i.files) for i in expected[pinned("extract.invoice")])


def _other(plan: dict, change: str) -> tuple[dict, str]:
    plan, seed = copy.deepcopy(plan), SEED
    gen = plan["workloads"][pinned("extract.invoice")]["spec"]["dataset"]["generator"]
    if change == "seed":
        seed = SEED + "-2"
    elif change == "generator code":
        plan["code"][gen] = {**plan["code"][gen], "fingerprint": "sha256:" + "0" * 64}
    elif change == "params":
        dataset = plan["workloads"][pinned("extract.invoice")]["spec"]["dataset"]
        dataset["params"] = {**dataset.get("params", {}), "unused_by_the_generator": 1}
    return plan, seed


@pytest.mark.parametrize("change", ["seed", "generator code", "params", "reportlab's version"])
def test_anything_that_decides_an_item_is_in_the_key(plan, user_cache, monkeypatch, change):
    item_gen.generate(plan, SEED)
    if change == "reportlab's version":
        bump_library_version(monkeypatch, "reportlab")
    other, seed = _other(plan, change)
    memo = ItemMemo(other, seed)
    invoice = other["workloads"][pinned("extract.invoice")]["spec"]["dataset"]
    made = []
    memo.item(invoice["generator"], 0, invoice.get("params", {}), lambda: made.append(1) or fresh(plan, seed)[pinned("extract.invoice")][0])
    assert made == [1] and memo.misses == 1 and memo.hits == 0


def _damage(plan, user_cache, damage):
    item_gen.generate(plan, SEED)
    blobs = sorted((user_cache / "blobs").iterdir())
    if damage in SEAL_DAMAGE:
        for path in entries(user_cache):
            damage_entry(path, damage, {"key": path.stem, "index": 0, "item_id": "forged", "context": "{}", "answer_key": "{}",
                                        "files": []})
    elif damage == "a file replaced by other bytes of its size":
        for path in blobs:
            data = path.read_bytes()
            path.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    elif damage == "a file missing":
        for path in blobs:
            path.unlink()
    elif damage == "a FIFO in a file's place":
        for path in blobs:
            path.unlink()
            os.mkfifo(path)
    elif damage == "an entry naming a file outside the cache":
        for path in entries(user_cache):
            entry = json.loads(sealing.unseal(sealing.secret(), path.read_bytes()))
            if entry["files"]:
                entry["files"][0][1] = "../" + entry["files"][0][1][3:]
            path.write_bytes(sealing.seal(sealing.secret(), json.dumps(entry).encode()))


@pytest.mark.parametrize("damage", [*SEAL_DAMAGE, "a file replaced by other bytes of its size", "a file missing",
                                    "a FIFO in a file's place", "an entry naming a file outside the cache"])
def test_a_damaged_entry_or_file_is_a_miss_never_used_nor_waited_on(plan, user_cache, damage):
    _damage(plan, user_cache, damage)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(item_gen.generate(plan, SEED)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "generation waited on the cache"
    same(result[0], fresh(plan))


def test_an_item_that_would_not_read_back_exactly_is_never_remembered(plan, user_cache):
    memo = ItemMemo(plan, SEED)
    gen = plan["workloads"][pinned("triage.ap-inbox")]["spec"]["dataset"]["generator"]
    item = fresh(plan)[pinned("triage.ap-inbox")][0]

    class Subclass(Item):
        pass

    odd = [dataclasses.replace(item, context={**item.context, "t": (1, 2)}),  # a tuple reads back as a list
           dataclasses.replace(item, answer_key={**item.answer_key, "x": float("nan")}),
           dataclasses.replace(item, context={**item.context, 3: "int key"}),
           Subclass(item.index, item.item_id, item.context, item.answer_key, item.files)]
    for index, value in enumerate(odd):
        for _ in range(2):
            assert memo.item(gen, index, {}, lambda value=value: value) is value
    assert memo.hits == 0 and entries(user_cache) == []


def test_a_held_out_seed_never_reaches_the_cache(plan, user_cache):
    secret_seed = "held-out-seed-5b1f0c2a77"
    item_gen.generate(plan, secret_seed)
    for path in [*entries(user_cache), *(user_cache / "blobs").iterdir()]:
        assert secret_seed.encode() not in path.read_bytes() and secret_seed not in path.name


@pytest.mark.parametrize("off", ["LRC_NO_CACHE", "memo=False"])
def test_off_the_memo_neither_reads_nor_writes(plan, user_cache, monkeypatch, off):
    item_gen.generate(plan, SEED)
    for path in entries(user_cache):  # trusted but stale: as if generated by other code
        entry = json.loads(sealing.unseal(sealing.secret(), path.read_bytes()))
        entry["item_id"] = "stale"
        path.write_bytes(sealing.seal(sealing.secret(), json.dumps(entry).encode()))
    before = sorted(p.name for p in user_cache.rglob("*"))
    if off == "LRC_NO_CACHE":
        monkeypatch.setenv("LRC_NO_CACHE", "1")
    got = item_gen.generate(plan, SEED, memo=off != "memo=False")
    same(got, fresh(plan))
    item_gen.generate(plan, SEED + "-new", memo=off != "memo=False")
    assert sorted(p.name for p in user_cache.rglob("*")) == before
