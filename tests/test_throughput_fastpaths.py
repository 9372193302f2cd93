"""Fast paths of issue 11 §4 (CPU per run) give exactly what the code they replace gave.

Each test re-states the replaced code (the slow path) and compares on several seeds or
shapes; the speed itself is measured by `benchmarks/throughput.py`, never timed here.
"""

from __future__ import annotations

import copy
import json
import hashlib
from decimal import Decimal

import cerberus
import pytest
from hypothesis import given, settings, strategies as st

from lrc.runtime.checks.rng import Stream
from lrc.runtime.report import stats
from lrc.runtime.workloads.triage_ap_inbox import grading as triage_grading


def _reference_block(key: bytes, counter: int) -> int:
    """The draw as rng.py first wrote it: OpenSSL's sha256, the first 8 bytes big-endian."""
    return int.from_bytes(hashlib.sha256(key + counter.to_bytes(8, "big")).digest()[:8], "big")


def _reference_below(key: bytes, counter: int, n: int) -> tuple[int, int]:
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        v = _reference_block(key, counter)
        counter += 1
        if v < limit:
            return v % n, counter


@pytest.mark.parametrize("seed", ["ledgerrate-demo-2026-11", "s", "ledgerrate-bench-2026-11", "\u00e9t\u00e9"])
def test_stream_draws_match_the_reference_sha256(seed):
    stream = Stream(seed, "items", 3)
    key, counter = stream._key, 0
    for n in (1, 2, 3, 7, 15, 525, 1000, 2**63 + 12345, 2**64 - 1):  # large n makes rejections likely
        for _ in range(20):
            want, counter = _reference_below(key, counter, n)
            assert stream.below(n) == want
    assert stream._counter == counter


@pytest.mark.parametrize("n", [1, 5, 15, 525, 2**63 + 1])
def test_below_many_is_below_in_a_loop(n):
    a, b = Stream("seed-a", "x"), Stream("seed-a", "x")
    a.below(7)
    b.below(7)
    assert a.below_many(n, 300) == [b.below(n) for _ in range(300)]
    assert a._counter == b._counter  # the stream continues at the same place
    assert a.below(99) == b.below(99)
    with pytest.raises(ValueError):
        a.below_many(0, 3)


def _reference_indices(seed: str, n: int, count: int) -> list[int]:
    """The bootstrap stream restated word by word: SHAKE-256 blocks, big-endian words, rejection."""
    key = hashlib.sha256(f"{seed}\x1fcpo-bootstrap\x1f{n}".encode()).digest()
    limit = (1 << 64) - ((1 << 64) % n)
    out, block = [], 0
    while len(out) < count:
        data = hashlib.shake_256(key + block.to_bytes(8, "big")).digest(8 * stats._BLOCK_WORDS)
        for i in range(0, len(data), 8):
            word = int.from_bytes(data[i:i + 8], "big")
            if word < limit and len(out) < count:
                out.append(word % n)
        block += 1
    return out


@pytest.mark.parametrize("seed,n,count", [("ledgerrate-demo-2026-11:triage", 15, 30000), ("s", 1, 10), ("bench", 525, 70000),
                                          ("x\u00e9", 37, 200), ("big", 2**63 + 1, 3000)])  # 2**63+1: ~half the words rejected
def test_bootstrap_indices_are_the_stated_stream(seed, n, count):
    got = stats.uniform_indices(seed, n, count)
    assert got == _reference_indices(seed, n, count)
    assert all(0 <= i < n for i in got)
    assert stats.uniform_indices(seed, n, count // 2) == got[:count // 2]  # a prefix, whatever the count


@pytest.mark.parametrize("seed,n,replicates", [("s", 1, 10), ("bench", 525, 40), ("x\u00e9", 37, 200)])
def test_resamples_cut_the_stream_into_replicates(seed, n, replicates):
    stats._resamples.cache_clear()
    draws = stats.uniform_indices(seed, n, n * replicates)
    assert stats._resamples(seed, n, replicates) == tuple(tuple(draws[r * n:(r + 1) * n]) for r in range(replicates))


def test_uniform_indices_refuse_an_empty_range():
    with pytest.raises(ValueError):
        stats.uniform_indices("s", 0, 3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.decimals(min_value=-10**6, max_value=10**9, places=6,
                                       allow_nan=False, allow_infinity=False), st.integers(0, 3)), min_size=1, max_size=40),
       st.integers(1, 60))
def test_bootstrap_integer_sums_equal_decimal_sums(rows, replicates):
    """The interval from exact integer sums is the one Decimal sums give."""
    costs = [c for c, _ in rows]
    successes = [s for _, s in rows]
    got = stats.bootstrap_cpo(costs, successes, "seed/w", replicates)
    values = []
    for draw in stats._resamples("seed/w", len(costs), replicates):
        wins = sum(successes[i] for i in draw)
        if wins:
            values.append(stats.MONEY_CONTEXT.divide(sum((costs[i] for i in draw), Decimal(0)), Decimal(wins)))
    if not values:
        assert got["low"] is None and got["high"] is None
        return
    values.sort()
    assert got["low"] == stats._percentile(values, stats._Q_LOW)
    assert got["high"] == stats._percentile(values, stats._Q_HIGH)
    assert got["p_no_success"] == (replicates - len(values)) / replicates


# -- triage normalization: the dict-entries fast path equals cerberus ------------------------

def _cerberus_normalize(answer):
    """`normalize` as it was: cerberus for every answer."""
    if not isinstance(answer, dict) or not isinstance(answer.get("labels"), list):
        return answer
    try:
        validator = cerberus.Validator(triage_grading._SCHEMA, allow_unknown=True)
        out = validator.normalized(copy.deepcopy(dict(answer)), always_return_document=True)
    except Exception:  # noqa: BLE001
        return answer
    return out if isinstance(out, dict) else answer


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.sampled_from([" Dunning Notice ", "po-response", "INVOICE", "other", "  e-7 ", "", "_a__b_"]),
                     st.text(max_size=12))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=8)
_entry = st.fixed_dictionaries({}, optional={"email_id": _json, "label": _json, "note": _json, "email": _json})
_answer = st.fixed_dictionaries({"labels": st.lists(_entry, max_size=6)}, optional={"notes": _json, "labels2": _json})


@settings(max_examples=300, deadline=None)
@given(_answer)
def test_triage_normalize_fast_path_equals_cerberus(answer):
    before = copy.deepcopy(answer)
    assert triage_grading._normalize_entries(answer) is not None
    assert triage_grading.normalize(answer) == _cerberus_normalize(answer)
    assert answer == before  # the answer itself is never changed


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({"labels": st.lists(st.one_of(_entry, _json), max_size=5)}))
def test_triage_normalize_of_any_entries_equals_cerberus(answer):
    assert triage_grading.normalize(answer) == _cerberus_normalize(answer)


def test_triage_normalize_examples():
    answer = {"labels": [{"email_id": " e-1 ", "label": " Dunning Notice"}, {"label": "PO response"}, {}],
              "extra": {"label": " X "}}
    want = {"labels": [{"email_id": "e-1", "label": "dunning_notice"}, {"label": "po_response"}, {}],
            "extra": {"label": " X "}}
    assert triage_grading.normalize(answer) == want == _cerberus_normalize(answer)
    odd = {"labels": ["e-1", {"email_id": " e-2 "}]}  # not every entry a dict: cerberus decides
    assert triage_grading._normalize_entries(odd) is None
    assert triage_grading.normalize(odd) == _cerberus_normalize(odd)


# -- rendered prompts are made once per item, and are what a fresh render gives ---------------

def _workload(mode="text"):
    return {"ref": "w.v1", "spec": {"task": {"title": "Triage"}, "input": {"mode": mode, "attachments": [
        {"file": "doc.pdf", "media_type": "application/pdf"}]}},
        "prompts": {"single-shot": {"system": {"template": "You do {{ task.title }}."},
                                    "user": {"template": "Item {{ item.n }}: {{ item.text }}"},
                                    "user_file": {"template": "See the file of item {{ item.n }}."}}}}


@pytest.mark.parametrize("mode", ["text", "file"])
def test_render_messages_reuses_texts_but_never_objects(mode):
    from lrc.runtime import execute
    from lrc.runtime.workloads.base import Item

    workload = _workload(mode)
    items = [Item(i, f"i-{i}", {"n": i, "text": "x" * i}, {}, {"doc.pdf": b"%PDF-" + bytes([i])}) for i in range(5)]
    execute._RENDERED.clear()
    first = [execute.render_messages(workload, "single-shot", item, {}) for item in items]
    again = [execute.render_messages(workload, "single-shot", item, {}) for item in items]
    execute._RENDERED.clear()
    fresh = [execute.render_messages(workload, "single-shot", item, {}) for item in items]
    assert first == again == fresh
    assert first[0][0]["content"] == "You do Triage." and "1" in json_text(first[1])
    first[0].append({"role": "assistant", "content": "changed"})  # a caller extends its transcript
    first[0][1]["content"] = "changed"
    assert execute.render_messages(workload, "single-shot", items[0], {}) == fresh[0]
    # Another item object with the same id()-slot contents is rendered from its own context.
    other = Item(0, "i-0", {"n": 99, "text": "y"}, {}, {"doc.pdf": b"%PDF-9"})
    assert "99" in json_text(execute.render_messages(workload, "single-shot", other, {}))
    # A changed template (another plan's prompts) is rendered anew.
    changed = _workload(mode)
    changed["prompts"]["single-shot"]["system"]["template"] = "Other {{ task.title }}."
    assert execute.render_messages(changed, "single-shot", items[0], {})[0]["content"] == "Other Triage."


def json_text(messages):
    import json

    return json.dumps(messages)


# -- the forecast's token counter: the tokenizer selected once counts what litellm counts ----

@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "gpt-4o", "anthropic/claude-sonnet-4-5", "deepseek/deepseek-chat",
                                   "gemini/gemini-2.5-flash", "openai/stub-model"])
def test_the_preselected_tokenizer_counts_what_litellm_counts(model):
    from lrc.runtime import estimate

    litellm = estimate._litellm()
    counter = estimate.counter_for({"id": model})
    bare = litellm.get_llm_provider(model)[0]
    messages = [{"role": "system", "content": "You triage accounts-payable email. Reply in JSON."},
                {"role": "user", "content": "Invoice INV-2026-0042 from Acme GmbH, EUR 1.234,56, due 2026-12-31. \u00e9\u00e8 \u4e2d\u6587 " * 7}]
    tools = [{"type": "function", "function": {"name": "lookup", "description": "Look a vendor up.",
                                               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
    for tool_list in (None, tools):
        assert counter.prompt(messages, tool_list) == litellm.token_counter(model=bare, messages=messages, tools=tool_list)
    assert counter.text("{\"labels\": [1, 2, 3]}") == litellm.token_counter(model=bare, text="{\"labels\": [1, 2, 3]}")


# -- a run file is written with as few system calls as it takes (runtime/report/outputs._put) --

def _reference_put(path, data: bytes) -> None:
    """_put as it was: mkdir, exists, read, write a temporary file, rename, exists."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _state(root) -> dict:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None, p.stat().st_mode & 0o7777)
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("before", [None, b"", b"same", b"sam", b"same and more", b"diff", b"x" * 70000])
@pytest.mark.parametrize("data", [b"", b"same", b"x" * 70000 + b"y"])
def test_put_leaves_what_the_replaced_put_left(tmp_path, before, data):
    from lrc.runtime.report.outputs import _put

    results = []
    for name, put in (("old", _reference_put), ("new", _put)):
        root = tmp_path / name
        target = root / "runs" / "w" / "m" / "s" / "item.r1" / "trace.json"  # folders made as needed
        if before is not None:
            target.parent.mkdir(parents=True)
            target.write_bytes(before)
        put(target, data)
        results.append(_state(root))
    assert results[0] == results[1]


def test_put_keeps_a_file_that_already_holds_the_bytes_and_replaces_one_that_does_not(tmp_path):
    from lrc.runtime.report.outputs import _put

    path = tmp_path / "a" / "f.json"
    _put(path, b"{}\n")
    first = path.stat()
    _put(path, b"{}\n")  # the same bytes: not written again (same inode, same mtime)
    again = path.stat()
    assert (again.st_ino, again.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
    _put(path, b"[]\n")  # as long, other bytes: replaced through a rename (a new inode)
    assert path.read_bytes() == b"[]\n" and path.stat().st_ino != first.st_ino
    _put(path, b"[]\n ")  # the same prefix, one byte longer
    assert path.read_bytes() == b"[]\n "


@pytest.mark.parametrize("fail", ["write", "replace"])
def test_put_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, fail):
    import errno
    import os

    from lrc.runtime.report import outputs

    path = tmp_path / "f.json"
    path.write_bytes(b"old")
    real = getattr(os, fail)
    calls = []

    def failing(*args):
        calls.append(args)
        if fail == "write":
            real(args[0], bytes(args[1])[:1])  # a torn write first, as a filling disk does
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, fail, failing)
    with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)):
        outputs._put(path, b"new bytes")
    monkeypatch.undo()
    assert calls and path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_put_where_a_file_stands_in_for_the_folder_is_the_os_error_and_changes_nothing(tmp_path):
    from lrc.runtime.report.outputs import _put

    (tmp_path / "runs").write_bytes(b"not a folder")
    with pytest.raises(OSError):
        _put(tmp_path / "runs" / "item.r1" / "trace.json", b"x")
    assert _state(tmp_path) == {"runs": (b"not a folder", (tmp_path / "runs").stat().st_mode & 0o7777)}


def _within(seconds: float, call):
    """call() on a daemon thread: its result, or a failure if it has not returned in `seconds`
    (a read of a FIFO with no writer waits forever; the suite must not)."""
    import threading

    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
def test_a_fifo_where_a_run_file_goes_is_replaced_never_waited_on(tmp_path):
    import os

    from lrc.runtime.report.outputs import _put

    path = tmp_path / "runs" / "item.r1" / "trace.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    _within(10, lambda: _put(path, b"{}\n"))
    assert path.is_file() and path.read_bytes() == b"{}\n"


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("planted", ["fifo", "folder"])
def test_something_else_where_an_item_file_goes_is_refused_never_waited_on(tmp_path, planted):
    import os

    from lrc.runtime import items
    from lrc.runtime.workloads.base import Item

    item = Item(index=0, item_id="it-01", context={"q": 1}, answer_key={"a": 2})
    path = tmp_path / "out" / "items" / "w.v1" / "it-01" / "item.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path) if planted == "fifo" else path.mkdir()
    with pytest.raises(items.ItemError, match="differs from what the locked generator produces"):
        _within(10, lambda: items.write({"w.v1": [item]}, tmp_path / "out"))
    items.write({"w.v1": [item]}, tmp_path / "elsewhere")  # and where nothing is in the way, it is written
    assert json.loads((tmp_path / "elsewhere" / "items" / "w.v1" / "it-01" / "item.json").read_text()) == \
        {"item_id": "it-01", "index": 0, "context": {"q": 1}}


def test_a_run_folder_is_new_once_and_its_files_are_written_without_comparison(tmp_path):
    from lrc.runtime.report.outputs import _new_folder, _put

    folder = tmp_path / "runs" / "w.v1" / "m" / "single-shot" / "it-01.r1"
    assert _new_folder(folder) is True and folder.is_dir()  # made with its parents
    assert _new_folder(folder) is False                      # there already: its files are compared
    _put(folder / "trace.json", b"{}\n", fresh=True)
    assert (folder / "trace.json").read_bytes() == b"{}\n"
    (tmp_path / "runs" / "w.v1" / "m" / "single-shot" / "it-02.r1").write_bytes(b"a file, not a folder")
    assert _new_folder(tmp_path / "runs" / "w.v1" / "m" / "single-shot" / "it-02.r1") is False
    with pytest.raises(OSError):  # and writing into it is the OS's error, as before
        _put(tmp_path / "runs" / "w.v1" / "m" / "single-shot" / "it-02.r1" / "trace.json", b"{}\n")
