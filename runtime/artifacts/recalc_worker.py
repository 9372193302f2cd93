"""Limits on recalculating a hostile workbook: static bounds first, then a limited worker.

Why: an agent's workbook is untrusted, and `safezip` only bounds its bytes. A few hundred
bytes of XML can still ask the engine for `SUM(A:XFD)` (17 billion cells, which `formulas`
expands into arrays), a formula nested a thousand levels deep (recursion in its parser), or a
hundred thousand formulas (its dependency graph). Run in the grading process, such a book
would exhaust the machine's memory or hang the run. Two fences, both failing closed (the
validators turn a refusal into `status: "error"`, never a pass):

1. `scan` — before the engine sees the book: the count of formulas, the length of each, the
   depth of its parentheses, and the cells its ranges (and the defined names') cover, against
   `Limits`; and the functions they call, against `formulatext.ALLOWED_FUNCTIONS` (one call of
   another can cost the whole CPU limit with no range at all: a backtracking REGEXTEST, MUNIT,
   MAKEARRAY). Deterministic and cheap: the same book is refused the same way on every machine.
2. `run_limited` — the engine runs in a forked child with `RLIMIT_AS` (address space above
   what the parent already maps) and `RLIMIT_CPU`, and the parent kills it at a wall-clock
   deadline. Fork, not a fresh interpreter: the child inherits the already-imported engine
   (numpy, scipy, schedula: ~1.5 s to import), so a limited recalculation costs what an
   unlimited one did. The child answers in JSON over a pipe (no pickle: nothing the child
   sends can run code in the parent), capped at `max_reply_bytes`.

Excel's own limits are the model for the static ones (8,192 characters per formula, 64 levels
of nesting); the range bound is far below Excel's sheet size on purpose: the seeded models'
formulas cover a handful of cells each, and an honest agent never needs a million.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

from openpyxl.utils import column_index_from_string

MAX_COLUMNS, MAX_ROWS = 16_384, 1_048_576


@dataclass(frozen=True)
class Limits:
    """What one recalculation may use; the defaults are generous for any finance model."""

    max_formulas: int = 50_000
    max_formula_chars: int = 8_192
    max_nesting: int = 64
    max_range_cells: int = 1_000_000  # summed over every range of every formula and defined name
    memory_bytes: int = 1_536 * 2**20  # address space the child may add to what it inherits
    cpu_seconds: int = 60
    wall_seconds: float = 120.0
    max_reply_bytes: int = 256 * 2**20


LIMITS = Limits()

_STRING = re.compile(r'"(?:[^"]|"")*"')
_SHEET = re.compile(r"'(?:[^']|'')*'!|[A-Za-z0-9_.]+!")
# Case-insensitive: the engine reads `c5:zz200000` as Excel does (`C5:ZZ200000`).
_AREA = re.compile(r"(?<![A-Za-z0-9_.])\$?([A-Za-z]{1,3})(?:\$?([0-9]{1,7}))?:\$?([A-Za-z]{1,3})(?:\$?([0-9]{1,7}))?(?![A-Za-z0-9_(])")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")
_ROWS = re.compile(r"(?<![A-Za-z0-9_.$:])\$?([0-9]{1,7}):\$?([0-9]{1,7})(?![0-9.])")


def nesting(formula: str) -> int:
    """The deepest parenthesis level of a formula, string literals ignored."""
    depth = deepest = 0
    for ch in _STRING.sub('""', formula):
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    return deepest


def range_cells(formula: str) -> int:
    """How many cells the formula's ranges (A1:B9, A:C, 3:5) cover, string literals ignored."""
    text = _SHEET.sub("", _STRING.sub('""', formula))
    total = 0
    for m in _AREA.finditer(text):
        c0, r0, c1, r1 = m.groups()
        if (r0 is None) != (r1 is None):
            continue  # not a range (a name such as "A:B2")
        cols = abs(column_index_from_string(c1.upper()) - column_index_from_string(c0.upper())) + 1
        rows = MAX_ROWS if r0 is None else abs(int(r1) - int(r0)) + 1
        total += cols * rows
    for m in _ROWS.finditer(_AREA.sub("", text)):
        total += (abs(int(m.group(2)) - int(m.group(1))) + 1) * MAX_COLUMNS
    return total


def refused_function(formula: str) -> str:
    """Why the formula may not be recalculated for a function it calls (`formulatext`'s rule:
    outside ALLOWED_FUNCTIONS, or reaching outside the book), or "" when every call may run."""
    from lrc.runtime.artifacts.formulatext import function_name, refusal_of_function

    for m in _CALL.finditer(_STRING.sub('""', formula)):
        refused = refusal_of_function(function_name(m.group(1)))
        if refused:
            return refused.split(" (", 1)[0] if "is not among" in refused else refused
    return ""


def scan(wb, limits: Limits = LIMITS) -> str:
    """Why the openpyxl workbook `wb` is too big to recalculate, or "" when it is within `limits`."""
    count = cells = 0
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type != "f" or not isinstance(cell.value, str):
                    continue
                count += 1
                where = f"{ws.title}!{cell.coordinate}"
                if count > limits.max_formulas:
                    return f"the workbook holds more than {limits.max_formulas} formulas"
                if len(cell.value) > limits.max_formula_chars:
                    return f"{where}'s formula is {len(cell.value)} characters long (limit {limits.max_formula_chars})"
                depth = nesting(cell.value)
                if depth > limits.max_nesting:
                    return f"{where}'s formula nests {depth} levels deep (limit {limits.max_nesting})"
                refused = refused_function(cell.value)
                if refused:
                    return f"{where}'s formula calls {refused}"
                cells += range_cells(cell.value)
                if cells > limits.max_range_cells:
                    return f"the formulas' ranges cover more than {limits.max_range_cells} cells (passed at {where})"
    for name, dn in sorted(wb.defined_names.items()):
        refused = refused_function(dn.attr_text or "")
        if refused:
            return f"the defined name {name} calls {refused}"
        cells += range_cells(dn.attr_text or "")
        if cells > limits.max_range_cells:
            return f"the ranges cover more than {limits.max_range_cells} cells (passed at the defined name {name})"
    return ""


def _mapped_bytes() -> int:
    """The address space this process maps now (the child's starting point)."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _child(work: Callable[[], Any], limits: Limits, ceiling: int, read_end: int, write_end: int) -> None:
    """The forked worker: limit itself, work, answer in JSON, exit without unwinding.

    The out-of-memory answer is encoded before the limits apply: out of address space, even
    building the reply can fail, and C code fails in its own ways (SystemError,
    RuntimeError), so any failure while near the ceiling is reported as memory."""
    code = 0
    out_of_memory = json.dumps({"error": f"it needed more than {limits.memory_bytes // 2**20} MiB of memory"}).encode()
    try:
        os.close(read_end)
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
        # SIGXCPU at the soft limit, SIGKILL a second later should the child ignore it
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        try:
            reply = json.dumps({"ok": work()}).encode("utf-8")
        except MemoryError:
            reply = out_of_memory
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
            near = _mapped_bytes() > ceiling - 64 * 2**20
            reply = out_of_memory if near else json.dumps({"error": f"{type(exc).__name__}: {exc}"[:2_000]}).encode()
    except BaseException:  # noqa: BLE001 - building any reply failed: out of memory in practice
        reply = out_of_memory
    try:
        view = memoryview(reply)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001 - a child must never unwind into the parent's code
        code = 3
    finally:
        os._exit(code)


def run_limited(work: Callable[[], Any], limits: Limits = LIMITS) -> tuple[Any, str]:
    """`work()`'s JSON-able answer computed in a limited child, and "" — or None and why not.

    The child's exceptions (MemoryError when RLIMIT_AS bites) come back as the reason; a
    child killed by SIGXCPU / SIGKILL, or still running at the deadline, is reported as the
    limit it exceeded."""
    ceiling = _mapped_bytes() + limits.memory_bytes
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(work, limits, ceiling, read_end, write_end)
    os.close(write_end)
    chunks, size, reason = [], 0, ""
    deadline = time.monotonic() + limits.wall_seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                reason = f"it ran past the {limits.wall_seconds:g} s wall-clock limit"
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limits.max_reply_bytes:
                reason = f"its answer exceeded {limits.max_reply_bytes} bytes"
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if reason:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if reason:
        return None, reason
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return None, f"it used more than {limits.cpu_seconds} s of CPU"
        return None, f"the worker was killed by {signal.Signals(sig).name} (past its CPU or memory limit)"
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        return None, "the worker ended without an answer (exit status %d)" % os.waitstatus_to_exitcode(status)
    if "error" in reply:
        return None, str(reply["error"])
    return reply["ok"], ""
