#!/usr/bin/env python3
"""Fuzzes the compiler with mutated specs (hypothesis-driven): it must answer with
diagnostics only — never an exception escaping `compile_project`, never a hang.

    .venv/bin/python benchmarks/fuzz_compiler.py [--seconds 60] [--timeout 5] [--seed N] [--out DIR]

Each example starts from the repository's real spec files (a scratch project copy), applies
1-4 random mutations drawn by hypothesis — delete/duplicate/swap lines, indentation changes,
scalars swapped for other types, tags, anchors/aliases/merge keys, directives and extra
documents, huge strings, deep nesting, unicode oddities (lone-surrogate escapes, NUL, BOM,
bidi controls, CR/NEL/U+2028 line breaks, invalid UTF-8), template syntax junk and resource
bombs, references with wrong versions, structural YAML/JSON edits, and file-level changes
(deleted, symlinked, FIFO, directory, duplicated spec) — then calls
`compile_project(root, check=<drawn>)` in-process and renders the diagnostics in every
`--format` (text, json, github) as UTF-8, as the CLI would.

Per-example timeout: a watchdog thread interrupts an example after --timeout seconds (a
hang); an example stuck in C code (which no signal interrupts) is killed by the supervising
process after a hard limit, its project saved, and the fuzz resumes in a fresh worker.
Each distinct crash is saved with a reproducer (project copy + repro.py) and a line-minimized
variant under --out (default /tmp/lrc-fuzz-<time>/).

Prints: examples run, distinct diagnostic codes seen (with counts), crashes and hangs (with
their reproducers), the slowest example. Exit 1 on any crash or hang, else 0.
Compiler code is never modified here: findings are reported, not fixed.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CODE_GATE_CODES, REPO, copy_project, forget_code_versions  # noqa: E402

MEMORY_LIMIT = 4 * 1024**3  # the worker's address-space cap: a memory bomb raises MemoryError, never OOMs the machine
MAX_SAVED_CRASHES = 8
MINIMIZE_SECONDS = 25  # per crash signature
MINIMIZE_TOTAL = 60  # per worker
IDLE_SECONDS = 90  # the longest the harness may work between two examples (restore, hypothesis) before it counts as stalled


# ==============================================================================================
# mutation pools
# ==============================================================================================

SCALAR_LITERALS = [
    "0", "-1", "1", "2", "99", "007", "0x1F", "0o17", "1_000", "1e400", "-1e400", ".nan", ".inf", "-.inf", "3.14",
    "99999999999999999999999999999999", "true", "false", "yes", "no", "on", "off", "null", "~", "", "''", '""',
    "[]", "{}", "[1, [2, [3]]]", "{a: 1, b: [x]}", "[a, b", "{a: 1", "x: y", "- a", "2026-01-01", "2026-13-45",
    "2026-01-01T25:61:00Z", "12:30:45", '"0.15"', "'0.15'", "0.15", "-0.0", "'it''s'", '"\\ud800"', '"\\udfff x"',
    '"\\U0010FFFF"', '"\\x00"', '"\\u202e\\u2066"', '"\\u2028"', '"\\x85"', '"\\ufeff"', "=", "<<", "? complex", "|",
    ">-", "@at", "`tick`", "%percent", "!bang", "&amp", "*star", "latest", "v1", "ledgerrate", "ledgerrate.v0",
    "ledgerrate.v999", "agentic.v1", "triage.ap-inbox.v1", "triage.ap-inbox.generator.v2", "lrc/oracle",
    "openai/gpt-x", "\"{{ item.__class__ }}\"", "'%s%s%s'", "USD", "EUR", "\u00e9\u0301\u200d", "\u0000",
]

TAGS = ["!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!binary ", "!!timestamp ", "!!set ", "!!omap ",
        "!!pairs ", "!!python/object/apply:os.system ", "!!python/name:os.system ", "!custom ", "!<tag:yaml.org,2002:str> ",
        "!local ", "!!map ", "!!seq "]

UNICODE_ODDITIES = [
    "\u0000", "\u0007", "\u001b[31m", "\u0085", "\u2028", "\u2029", "\ufeff", "\u200b", "\u200d", "\u202e", "\u2066",
    "\u0301\u0301\u0301", "\U0001F600", "\U000E0041", "\uFFFE", "\uFFFF", "\U0010FFFF", "\u00a0", "\u3000", "\t",
    "\r", "\r\n", "\u0130", "\u212a", "\ufb01", "Ω", "İ", "ß", "\U0001D400",
]

TEMPLATE_JUNK = [
    "{{", "}}", "{%", "%}", "{#", "#}", "{{ }}", "{% %}", "{% for x in %}", "{% endfor %}", "{% if %}", "{% endif %}",
    "{% for e in item.emails %}", "{% raw %}", "{% endraw %}", "{# unclosed comment", "{{ item.emails[0] }}",
    "{{ item.__class__.__mro__[1].__subclasses__() }}", "{{ ''.__class__ }}", "{{ task.labels.append(1) }}",
    "{{ task.__init__.__globals__ }}", "{{ self }}", "{{ self._TemplateReference__context }}", "{{ loop }}",
    "{{ undefined_var }}", "{{ item.missing.deep }}", "{{ task.labels[99] }}", "{{ item.emails[10**20] }}",
    "{% include 'system.j2' %}", "{% extends 'system.j2' %}", "{% import 'x.j2' as y %}", "{% from 'x' import y %}",
    "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "{% set x = 1 %}{{ x }}", "{% set ns = namespace(a=1) %}",
    "{{ range(100000) | list | length }}", "{{ range(10**9) | list | length }}", "{{ 'x' * 100000000 }}",
    "{{ 9 ** 9 ** 9 }}", "{{ ((9 ** 64) ** 64) ** 64 }}", "{{ (((9 ** 64) ** 64) ** 64) ** 64 }}",
    "{{ ((((9 ** 64) ** 64) ** 64) ** 64) ** 64 }}", "{% set a = 9 ** 64 %}{% set b = a ** 64 %}{% set c = b ** 64 %}{{ c ** 64 }}",
    "{{ '%0999999999d' % 1 }}", "{{ '%099999999999d' % 1 }}", "{{ '{:099999999999}'.format(1) }}",
    "{{ 'x' | center(1000000000) }}", "{{ 'x' | center(10**12) }}", "{{ 'x' | indent(10**10) }}",
    "{{ 'a b ' * 1000 | wordwrap(0) }}", "{{ item.emails | batch(0) | list }}", "{{ item | tojson }}", "{{ item | pprint }}",
    "{{ 1/0 }}", "{{ 1//0 }}", "{{ 1 % 0 }}", "{{ task.labels | sort(attribute='x') | list }}", "{{ item | attr('__dict__') }}",
    "{{ item.emails | map(attribute='__class__') | list }}", "{{ '{0.__class__}'.format(item) }}",
    "{{ lipsum() }}", "{{ cycler(1) }}", "{{ joiner() }}", "{{ now() }}", "{{ 'x' | random }}", "{{ x | nofilter }}",
    "{% filter upper %}", "{% endfilter %}", "{% call %}", "{% block b %}{% endblock %}", "{% do 1 %}",
    "{% with a = 1 %}{{ a }}{% endwith %}", "{% autoescape true %}", "{{ '\\ud800' }}", "{{ '\\udfff' * 3 }}",
    "{{ item.emails | selectattr('x', 'gt', 1) | list }}", "{{ task | dictsort }}", "{{ item.emails | sum }}",
    "{{ 'abc' | replace('', 'x' * 1000) }}", "{{ ('a' * 1000) | replace('a', 'b' * 1000) }}",
    "{{ ''.join(['x'] * 10) }}", "{{ [1] * 10**9 }}", "{{ (1,) * 10**9 }}", "{{ 10 ** -5000 }}", "{{ 2.0 ** 10000 }}",
    "{% for i in range(10) recursive %}{{ loop(range(i)) }}{% endfor %}", "{{ caller() }}", "{{ super() }}",
    "\u0000", "\ufeff", "\u202e",
]

JINJA_TOKENS = ["{{", "}}", "{%", "%}", "{#", "#}", "for", "in", "if", "else", "endif", "endfor", "set", "=", "|", ".", "(",
                ")", "[", "]", ",", "item", "task", "loop", "x", "'s'", "1", "**", "*", "~", "not", "and", "is", "defined",
                "\n", " ", "macro", "call", "raw", "endraw", "-", "+", ":"]

REF_VERSIONS = ["0", "2", "3", "99", "-1", "01", "1.5", "v1", "", "999999999999999999999999", "١", "X"]

PY_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2, 10**30, 1.5, -0.0, "", "x", "latest", "ledgerrate.v999", "nope.v1", "0.15", "free",
    [], {}, [1, "a", None], {"a": {"b": [None]}}, "2026-02-30", "\u202e\u2066rtl", "\U0001F600", "x" * 300,
    ["single-shot.v1", "single-shot.v1"], {"id": "x", "version": 1}, [[[[[[[]]]]]]],
]


# ==============================================================================================
# the worker: in-process fuzzing
# ==============================================================================================

class ExampleTimeout(BaseException):
    """Raised in the main thread by the watchdog; a BaseException so no `except Exception` eats it."""


_ARMED = False


def _on_timeout(signum, frame):
    if _ARMED:
        raise ExampleTimeout()


class Watchdog:
    """Interrupts the main thread with SIGUSR1 after `seconds` unless the block ended first.

    Not SIGALRM/ITIMER_REAL: the compiler's render stage uses that timer itself and resets it.
    The signal goes to the main thread (pthread_kill), so a blocking system call there (e.g.
    opening a FIFO) is interrupted too. Code that holds the GIL inside C is not: the
    supervising process handles that case.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.timer: threading.Timer | None = None

    def _fire(self) -> None:
        if _ARMED:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    def __enter__(self):
        global _ARMED
        _ARMED = True
        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc):
        global _ARMED
        _ARMED = False
        if self.timer is not None:
            self.timer.cancel()
        return False


def atomic_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(value, ensure_ascii=True), encoding="utf-8")
    os.replace(tmp, path)


def _decode(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


_KEY_LINE = re.compile(r"^(\s*(?:- )?[^\s#:][^:#]*?:[ \t]+)(\S.*)$")
_ITEM_LINE = re.compile(r"^(\s*- )(\S.*)$")
_REF = re.compile(r"\b([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*)\.v(\d+)\b")


class Mutator:
    """Mutations of one project's spec files. `files` maps a project-relative path to its
    new content (bytes), or to a marker tuple for file-level changes."""

    def __init__(self, project: Path, targets: list[str]):
        self.project = project
        self.targets = targets

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _lines(content: bytes) -> list[str]:
        return _decode(content).split("\n")

    @staticmethod
    def _join(lines: list[str]) -> bytes:
        return _encode("\n".join(lines))

    @staticmethod
    def _pick(data, seq, label):
        from hypothesis import strategies as st
        return data.draw(st.sampled_from(seq), label=label)

    @staticmethod
    def _int(data, lo, hi, label):
        from hypothesis import strategies as st
        return data.draw(st.integers(min_value=lo, max_value=max(lo, hi)), label=label)

    def _value_line(self, data, lines: list[str]) -> int | None:
        cands = [i for i, ln in enumerate(lines) if _KEY_LINE.match(ln) or _ITEM_LINE.match(ln)]
        if not cands:
            return None
        return self._pick(data, cands, "line")

    def _set_value(self, lines: list[str], i: int, value: str) -> None:
        m = _KEY_LINE.match(lines[i]) or _ITEM_LINE.match(lines[i])
        if m:
            lines[i] = m.group(1) + value

    # -- text operations (any file) ------------------------------------------------------------
    def op_delete_lines(self, data, content, kind):
        lines = self._lines(content)
        i = self._int(data, 0, len(lines) - 1, "start")
        n = self._pick(data, [1, 1, 2, 5, 20], "count")
        del lines[i:i + n]
        return self._join(lines), f"delete {n} line(s) at {i + 1}"

    def op_duplicate_line(self, data, content, kind):
        lines = self._lines(content)
        i = self._int(data, 0, len(lines) - 1, "line")
        j = self._int(data, 0, len(lines), "to")
        lines.insert(j, lines[i])
        return self._join(lines), f"duplicate line {i + 1} to {j + 1}"

    def op_swap_lines(self, data, content, kind):
        lines = self._lines(content)
        i, j = self._int(data, 0, len(lines) - 1, "a"), self._int(data, 0, len(lines) - 1, "b")
        lines[i], lines[j] = lines[j], lines[i]
        return self._join(lines), f"swap lines {i + 1} and {j + 1}"

    def op_reindent(self, data, content, kind):
        lines = self._lines(content)
        i = self._int(data, 0, len(lines) - 1, "line")
        how = self._pick(data, ["+1", "+2", "-1", "-2", "tab", "0", "+40"], "indent")
        body = lines[i].lstrip(" ")
        cur = len(lines[i]) - len(body)
        if how == "tab":
            lines[i] = "\t" + lines[i]
        elif how == "0":
            lines[i] = body
        else:
            lines[i] = " " * max(0, cur + int(how)) + body
        return self._join(lines), f"indent line {i + 1} {how}"

    def op_insert_text(self, data, content, kind):
        from hypothesis import strategies as st
        text = _decode(content)
        pos = self._int(data, 0, len(text), "pos")
        junk = data.draw(st.one_of(st.sampled_from(UNICODE_ODDITIES), st.text(max_size=12),
                                   st.sampled_from([": ", "- ", "#", "'", '"', "[", "{", "}", "]", ",", "\n", "\n  ", "? ", "|", ">",
                                                    "&", "*", "!", "%", "@", "`", "\\"])), label="junk")
        return _encode(text[:pos] + junk + text[pos:]), f"insert {junk!r} at char {pos}"

    def op_truncate(self, data, content, kind):
        pos = self._int(data, 0, len(content), "pos")
        return content[:pos], f"truncate at byte {pos}"

    def op_bytes(self, data, content, kind):
        pos = self._int(data, 0, len(content), "pos")
        junk = self._pick(data, [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\r", b"\x85", b"\xe2\x80\xa8",
                                 b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x1b", b"\x7f"], "bytes")
        if self._pick(data, [False, True], "overwrite") and pos < len(content):
            return content[:pos] + junk + content[pos + 1:], f"overwrite byte {pos} with {junk!r}"
        return content[:pos] + junk + content[pos:], f"insert bytes {junk!r} at {pos}"

    def op_line_endings(self, data, content, kind):
        sep = self._pick(data, ["\r\n", "\r", "\u0085", "\u2028", "\n\n"], "sep")
        return _encode(_decode(content).replace("\n", sep)), f"line endings -> {sep!r}"

    def op_bom(self, data, content, kind):
        where = self._pick(data, ["start", "twice", "utf16"], "bom")
        if where == "utf16":
            return _decode(content).encode("utf-16", "surrogatepass"), "re-encode as UTF-16"
        return (b"\xef\xbb\xbf" * (2 if where == "twice" else 1)) + content, f"BOM ({where})"

    def op_huge_string(self, data, content, kind):
        n = self._pick(data, [1_000, 100_000, 300_000, 600_000], "size")
        if kind == "yaml":
            lines = self._lines(content)
            i = self._value_line(data, lines)
            if i is None:
                return content, "huge string (no value line)"
            style = self._pick(data, ["plain", "quoted", "block"], "style")
            big = "x" * n
            if style == "plain":
                self._set_value(lines, i, big)
            elif style == "quoted":
                self._set_value(lines, i, f'"{big}"')
            else:
                self._set_value(lines, i, "|\n" + " " * 40 + big)
            return self._join(lines), f"huge {style} string ({n} chars) at line {i + 1}"
        if kind == "json":
            return _encode(_decode(content).replace('"description": "', '"description": "' + "x" * n, 1)), f"huge JSON string ({n})"
        return content + _encode("x" * n), f"append {n} chars"

    # -- YAML operations -----------------------------------------------------------------------
    def op_replace_scalar(self, data, content, kind):
        lines = self._lines(content)
        i = self._value_line(data, lines)
        if i is None:
            return content, "replace scalar (none)"
        value = self._pick(data, SCALAR_LITERALS, "value")
        self._set_value(lines, i, value)
        return self._join(lines), f"line {i + 1} value -> {value!r}"

    def op_tag(self, data, content, kind):
        lines = self._lines(content)
        i = self._value_line(data, lines)
        if i is None:
            return content, "tag (none)"
        tag = self._pick(data, TAGS, "tag")
        m = _KEY_LINE.match(lines[i]) or _ITEM_LINE.match(lines[i])
        lines[i] = m.group(1) + tag + m.group(2)
        return self._join(lines), f"tag {tag.strip()} at line {i + 1}"

    def op_anchor_alias(self, data, content, kind):
        lines = self._lines(content)
        how = self._pick(data, ["anchor", "alias", "undefined-alias", "merge", "bomb"], "how")
        if how == "bomb":
            bomb = ["zz_a: &a [x, x, x, x, x, x, x, x, x]"] + [f"zz_{c}: &{c} [{', '.join(['*' + p] * 9)}]"
                                                                for p, c in zip("abcdefgh", "bcdefghi")]
            return self._join(lines + bomb), "append alias bomb (9^9)"
        i = self._value_line(data, lines)
        if i is None:
            return content, f"{how} (none)"
        m = _KEY_LINE.match(lines[i]) or _ITEM_LINE.match(lines[i])
        if how == "anchor":
            lines[i] = m.group(1) + "&anc " + m.group(2)
        elif how == "alias":
            lines[i] = m.group(1) + "&anc " + m.group(2)
            j = self._value_line(data, lines)
            if j is not None and j != i:
                self._set_value(lines, j, "*anc")
        elif how == "undefined-alias":
            self._set_value(lines, i, "*nowhere")
        else:
            indent = re.match(r"\s*", lines[i]).group(0)
            lines.insert(i, f"{indent}<<: {{merged: 1}}")
        return self._join(lines), f"{how} at line {i + 1}"

    def op_deep_nesting(self, data, content, kind):
        depth = self._pick(data, [10, 39, 40, 41, 100, 1000, 20000], "depth")
        style = self._pick(data, ["flow-seq", "flow-map", "block"], "style")
        lines = self._lines(content)
        if style == "block":
            nest = [" " * (2 * d) + f"k{d}:" for d in range(min(depth, 2000))] + [" " * (2 * min(depth, 2000)) + "leaf: 1"]
            return self._join(lines + ["zz_deep:"] + ["  " + ln for ln in nest]), f"block nesting {min(depth, 2000)} deep"
        i = self._value_line(data, lines)
        if i is None:
            return content, "nesting (none)"
        value = "[" * depth + "]" * depth if style == "flow-seq" else "{a: " * depth + "1" + "}" * depth
        self._set_value(lines, i, value)
        return self._join(lines), f"{style} nesting {depth} deep at line {i + 1}"

    def op_unicode_scalar(self, data, content, kind):
        from hypothesis import strategies as st
        lines = self._lines(content)
        i = self._value_line(data, lines)
        if i is None:
            return content, "unicode (none)"
        odd = data.draw(st.one_of(st.sampled_from(UNICODE_ODDITIES), st.text(min_size=1, max_size=16)), label="odd")
        style = self._pick(data, ["raw", "double", "key"], "style")
        if style == "raw":
            m = _KEY_LINE.match(lines[i]) or _ITEM_LINE.match(lines[i])
            lines[i] = m.group(1) + m.group(2) + odd
        elif style == "double":
            self._set_value(lines, i, json.dumps("v" + odd))  # JSON escapes are valid YAML double-quoted escapes
        else:
            lines[i] = odd + lines[i]
        return self._join(lines), f"unicode {odd!r} ({style}) at line {i + 1}"

    def op_surrogate_escape(self, data, content, kind):
        lines = self._lines(content)
        i = self._value_line(data, lines)
        if i is None:
            return content, "surrogate (none)"
        esc = self._pick(data, ['"\\ud800"', '"a\\udfffb"', '"\\ud83d\\ude00"', '"\\ude00\\ud83d"', '"\\U0000D800"', '"\\x00"'], "esc")
        where = self._pick(data, ["value", "key"], "where")
        if where == "value":
            self._set_value(lines, i, esc)
        else:
            indent = re.match(r"\s*", lines[i]).group(0)
            lines.insert(i, f"{indent}{esc}: 1")
        return self._join(lines), f"escape {esc} as {where} at line {i + 1}"

    def op_documents(self, data, content, kind):
        how = self._pick(data, ["---", "...", "directive-yaml", "directive-tag", "second-doc", "empty"], "how")
        text = _decode(content)
        if how == "directive-yaml":
            return _encode("%YAML 1.1\n---\n" + text), "prepend %YAML 1.1"
        if how == "directive-tag":
            return _encode("%TAG !e! tag:example.com,2000:\n---\n" + text), "prepend %TAG"
        if how == "second-doc":
            return _encode(text + "\n---\nkind: workload\nid: x.y\n"), "append a second document"
        if how == "empty":
            return self._pick(data, [b"", b"---\n", b"# only a comment\n", b"~\n", b"[]\n", b"- a\n", b"x\n"], "empty"), "empty-ish file"
        lines = text.split("\n")
        i = self._int(data, 0, len(lines), "line")
        lines.insert(i, how)
        return _encode("\n".join(lines)), f"insert {how} at line {i + 1}"

    def op_ref_version(self, data, content, kind):
        text = _decode(content)
        matches = list(_REF.finditer(text))
        vm = list(re.finditer(r"^(version:[ \t]*)(\S+)", text, re.M))
        if not matches and not vm:
            return content, "ref (none)"
        if vm and (not matches or self._pick(data, [False, True], "own-version")):
            m = vm[0]
            new = self._pick(data, ["0", "2", "-1", "1.0", '"1"', "100", "99999999999999999999", "null"], "version")
            return _encode(text[:m.start(2)] + new + text[m.end(2):]), f"version: {m.group(2)} -> {new}"
        m = self._pick(data, matches, "ref")
        how = self._pick(data, ["version", "unpinned", "latest", "typo", "other-kind", "case"], "how")
        if how == "version":
            new = f"{m.group(1)}.v{self._pick(data, REF_VERSIONS, 'v')}"
        elif how == "unpinned":
            new = m.group(1)
        elif how == "latest":
            new = f"{m.group(1)}.latest"
        elif how == "typo":
            name = m.group(1)
            k = self._int(data, 0, len(name) - 2, "k")
            new = f"{name[:k]}{name[k + 1]}{name[k]}{name[k + 2:]}.v{m.group(2)}"
        elif how == "other-kind":
            new = self._pick(data, ["agentic.v1", "ledgerrate.v2", "demo.v3", "triage.ap-inbox.v1", "failure-taxonomy.v1",
                                    "artifact-review.v1", "triage.ap-inbox.generator.v1", "lrc.output-contract.v1"], "other")
        else:
            new = m.group(0).upper()
        return _encode(text[:m.start()] + new + text[m.end():]), f"ref {m.group(0)} -> {new}"

    def _walk(self, data, node):
        """Draw a path into plain data; returns (parent, key) of the chosen node (parent None = root)."""
        parent, key = None, None
        for _ in range(12):
            if isinstance(node, dict) and node:
                keys = list(node)
            elif isinstance(node, list) and node:
                keys = list(range(len(node)))
            else:
                break
            if parent is not None and self._pick(data, [False, True], "stop"):
                break
            k = self._pick(data, keys, "key")
            parent, key, node = node, k, node[k]
        return parent, key

    def _structural(self, data, tree) -> str:
        parent, key = self._walk(data, tree)
        if parent is None:
            return "no structure"
        how = self._pick(data, ["delete", "replace", "rename", "unknown-sibling", "wrap-list", "wrap-map", "deep",
                                "duplicate", "empty"], "how")
        old = parent[key]
        if how == "delete":
            del parent[key]
        elif how == "replace":
            parent[key] = self._pick(data, PY_VALUES, "value")
        elif how == "rename" and isinstance(parent, dict):
            new = self._pick(data, [key + "s", key.upper(), key[:-1] or "k", "_" + key, key.replace("_", "-"), "$ref", "<<", ""], "new")
            parent[new] = parent.pop(key)
            return f"rename key {key!r} -> {new!r}"
        elif how == "unknown-sibling" and isinstance(parent, dict):
            parent[self._pick(data, ["extra", "notes", "x-vendor", "version2", "id "], "k")] = self._pick(data, PY_VALUES, "v")
        elif how == "wrap-list":
            parent[key] = [old]
        elif how == "wrap-map":
            parent[key] = {"value": old}
        elif how == "deep":
            v: Any = old
            for _ in range(self._pick(data, [5, 41, 200], "depth")):
                v = [v]
            parent[key] = v
        elif how == "duplicate" and isinstance(parent, list):
            parent.insert(key, old)
        elif how == "empty":
            parent[key] = type(old)() if isinstance(old, (dict, list, str)) else None
        else:
            parent[key] = None
        return f"{how} at {key!r}"

    def op_yaml_structure(self, data, content, kind):
        from ruamel.yaml import YAML
        text = _decode(content)
        try:
            tree = YAML(typ="safe", pure=True).load(text)
        except Exception:
            return content, "structure (unparseable)"
        if not isinstance(tree, (dict, list)):
            return content, "structure (scalar)"
        desc = self._structural(data, tree)
        import io
        out = io.StringIO()
        y = YAML(typ="safe", pure=True)
        y.default_flow_style = False
        y.width = 4096
        y.allow_unicode = True
        try:
            y.dump(tree, out)
        except Exception:
            return content, "structure (undumpable)"
        head = text.split("\n", 1)[0]
        prefix = head + "\n" if head.startswith("#") else ""
        return _encode(prefix + out.getvalue()), f"YAML structure: {desc}"

    # -- JSON and template operations ----------------------------------------------------------
    def op_json_structure(self, data, content, kind):
        try:
            tree = json.loads(_decode(content))
        except Exception:
            return content, "json (unparseable)"
        extra = self._pick(data, ["structural", "bad-keyword"], "how")
        if extra == "bad-keyword" and isinstance(tree, dict):
            k, v = self._pick(data, [("type", 5), ("type", "nonsense"), ("$ref", "#/nope"), ("$ref", "https://example.com/x.json"),
                                      ("$ref", "#"), ("pattern", "("), ("pattern", "(a+)+$"), ("format", "no-such-format"),
                                      ("required", "labels"), ("enum", []), ("minItems", -1), ("$schema", "http://json-schema.org/draft-04/schema#"),
                                      ("$id", ""), ("$defs", {"a": {"$ref": "#/$defs/a"}}), ("$dynamicRef", "#meta"), ("additionalProperties", "no")],
                              "kw")
            tree[k] = v
            desc = f"set {k!r} to {v!r}"
        else:
            desc = self._structural(data, tree) if isinstance(tree, (dict, list)) else "scalar"
        nan = self._pick(data, [False, False, True], "nan")
        if nan and isinstance(tree, dict):
            tree["x-nan"] = float("nan")
        return _encode(json.dumps(tree, indent=2, ensure_ascii=False)), f"JSON: {desc}" + (" (+NaN)" if nan else "")

    def op_template_junk(self, data, content, kind):
        from hypothesis import strategies as st
        text = _decode(content)
        pos = self._int(data, 0, len(text), "pos")
        if self._pick(data, [False, False, True], "generated"):
            junk = " ".join(data.draw(st.lists(st.sampled_from(JINJA_TOKENS), min_size=1, max_size=10), label="tokens"))
        else:
            junk = self._pick(data, TEMPLATE_JUNK, "snippet")
        if self._pick(data, [False, True], "replace-all"):
            return _encode(junk), f"template := {junk!r}"
        return _encode(text[:pos] + junk + text[pos:]), f"template insert {junk!r} at {pos}"

    def op_ledger_edit(self, data, content, kind):
        """Edits of generated/ files (the ledger, locks, samples) as a careless merge would make them."""
        text = _decode(content)
        how = self._pick(data, ["digest-char", "version", "drop-field", "not-json", "reorder", "append-record"], "how")
        digests = list(re.finditer(r"sha256:([0-9a-f]{64})", text))
        if how == "digest-char" and digests:
            m = self._pick(data, digests, "digest")
            k = m.start(1) + self._int(data, 0, 63, "k")
            return _encode(text[:k] + ("0" if text[k] != "0" else "1") + text[k + 1:]), f"flip a digest character at {k}"
        if how == "version":
            new = re.sub(r'"version": (\d+)', lambda m: f'"version": {self._pick(data, ["0", "-1", "1.5", chr(34) + "1" + chr(34), "null"], "v")}',
                         text, count=1)
            return _encode(new), "ledger/lock version value changed"
        if how == "drop-field":
            return _encode(re.sub(r'"digest": "[^"]*", ', "", text, count=1)), "drop a digest field"
        if how == "not-json":
            lines = text.split("\n")
            i = self._int(data, 0, len(lines) - 1, "line")
            lines[i] = lines[i][: len(lines[i]) // 2]
            return _encode("\n".join(lines)), f"cut line {i + 1} in half"
        if how == "reorder":
            lines = [ln for ln in text.split("\n") if ln]
            return _encode("\n".join(reversed(lines)) + "\n"), "reverse line order"
        rec = self._pick(data, ['{"kind": "workload", "id": "triage.ap-inbox", "version": 1, "digest": "sha256:' + "0" * 64 + '"}',
                                '{"kind": "code", "id": "x", "version": 1}', '[]', '{"kind": "standard", "id": "ledgerrate", "version": 99, "digest": "x"}'],
                         "record")
        return _encode(text + rec + "\n"), f"append record {rec[:40]}"

    # -- file-level operations (return a marker instead of bytes) ------------------------------
    def op_file(self, data, content, kind):
        how = self._pick(data, ["delete", "symlink-outside", "symlink-sibling", "symlink-dangling", "symlink-loop",
                                "directory", "fifo"], "how")
        return ("file", how), f"file: {how}"


TEXT_OPS = ["delete_lines", "duplicate_line", "swap_lines", "reindent", "insert_text", "truncate", "bytes",
            "line_endings", "bom", "huge_string", "file"]
YAML_OPS = ["replace_scalar", "replace_scalar", "tag", "anchor_alias", "deep_nesting", "unicode_scalar", "surrogate_escape",
            "documents", "ref_version", "ref_version", "yaml_structure", "yaml_structure"]
OPS = {"yaml": TEXT_OPS + YAML_OPS, "json": TEXT_OPS + ["json_structure"] * 4, "j2": TEXT_OPS + ["template_junk"] * 6,
       "generated": ["delete_lines", "duplicate_line", "swap_lines", "insert_text", "truncate", "bytes", "file", "ledger_edit",
                     "ledger_edit", "ledger_edit"]}


def kind_of(rel: str) -> str:
    if rel.startswith("generated/"):
        return "generated"
    if rel.endswith((".yaml", ".yml")):
        return "yaml"
    if rel.endswith(".json"):
        return "json"
    return "j2"


class Worker:
    def __init__(self, args):
        self.args = args
        self.out = Path(args.out)
        self.stats_path = self.out / "stats.json"
        self.heartbeat = self.out / "heartbeat.json"
        self.scratch = Path(tempfile.mkdtemp(prefix="lrc-fuzz-work-"))
        self.project = copy_project(self.scratch / "project")
        self.pristine_generated = self.scratch / "pristine-generated"
        shutil.copytree(self.project / "generated", self.pristine_generated)
        self.targets = sorted(p.relative_to(self.project).as_posix() for p in (self.project / "specs").rglob("*")
                              if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".j2"))
        self.original = {rel: (self.project / rel).read_bytes() for rel in self.targets}
        self.mutator = Mutator(self.project, self.targets)
        self.gen_targets: list[str] = []
        self.minimize_spent = 0.0
        self.stats = self._load_stats()
        from lrc.compiler.codes import CODES
        from lrc.compiler.pipeline import compile_project
        from lrc.compiler import printer
        self.CODES, self.compile_project, self.printer = CODES, compile_project, printer
        if args.self_test:
            self.compile_project = self._self_test(compile_project, args.self_test)

    @staticmethod
    def _self_test(real, what: str):
        """Checks this harness: the first mutated example crashes, hangs in Python, or hangs in C."""
        state = {"calls": 0}

        def compile_project(root, check=False):
            state["calls"] += 1
            if state["calls"] == 2:  # call 1 is the baseline
                if what == "crash":
                    raise RuntimeError("self-test crash")
                if what == "hang":
                    while True:
                        pass
                if what == "hard-hang":
                    re.match(r"(a+)+$", "a" * 64 + "b")  # catastrophic backtracking in C, holding the GIL
            return real(root, check=check)
        return compile_project

    def _load_stats(self) -> dict:
        if self.stats_path.exists():
            return json.loads(self.stats_path.read_text(encoding="utf-8"))
        return {"examples": 0, "seconds": 0.0, "codes": {}, "occurrences": {}, "outcomes": {}, "ops": {}, "files": {},
                "crashes": [], "hangs": [], "undocumented": {}, "slowest": None, "baseline": None, "workers": 0, "check_mode": {}}

    def save_stats(self) -> None:
        atomic_json(self.stats_path, self.stats)

    def beat(self, **state) -> None:
        """Tell the supervisor what runs and until when it may run; between examples (idle) the
        harness itself gets IDLE_SECONDS before the supervisor calls it stalled."""
        state.setdefault("deadline", time.time() + IDLE_SECONDS)
        atomic_json(self.heartbeat, {"pid": os.getpid(), "project": str(self.project), "time": time.time(), **state})

    # -- project state -------------------------------------------------------------------------
    def apply(self, changes: dict[str, Any]) -> None:
        for rel, new in changes.items():
            path = self.project / rel
            if isinstance(new, tuple):
                how = new[1]
                self._remove(path)
                if how == "symlink-outside":
                    os.symlink("/etc/hostname", path)
                elif how == "symlink-sibling":
                    sib = next((t for t in self.targets if t != rel and Path(t).parent == Path(rel).parent), None)
                    os.symlink(Path(sib).name if sib else "/etc/hostname", path)
                elif how == "symlink-dangling":
                    os.symlink("no-such-file", path)
                elif how == "symlink-loop":
                    os.symlink(path.name, path)
                elif how == "directory":
                    path.mkdir()
                    (path / "inner.yaml").write_text("kind: x\n")
                elif how == "fifo":
                    os.mkfifo(path)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(new)

    @staticmethod
    def _remove(path: Path) -> None:
        if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)

    def restore(self, changes: dict[str, Any], generated: bool) -> None:
        for rel in changes:
            path = self.project / rel
            self._remove(path) if (path.exists() or path.is_symlink()) else None
            if rel in self.original:
                path.write_bytes(self.original[rel])
        if generated:
            shutil.rmtree(self.project / "generated", ignore_errors=True)
            shutil.copytree(self.pristine_generated, self.project / "generated")

    # -- one example ---------------------------------------------------------------------------
    def draw_changes(self, data) -> tuple[dict[str, Any], list[str]]:
        from hypothesis import strategies as st
        changes: dict[str, Any] = {}
        descs: list[str] = []
        for _ in range(data.draw(st.integers(1, 4), label="n_ops")):
            if self.mutator._pick(data, [False] * 9 + [True], "new-file"):
                rel, content = self._new_file(data)
                changes[rel] = content
                descs.append(f"{rel}: new file")
                continue
            if self.gen_targets and self.mutator._pick(data, [False] * 7 + [True], "generated"):
                rel = self.mutator._pick(data, self.gen_targets, "generated-file")
            else:
                rel = self.mutator._pick(data, self.targets, "file")
            current = changes.get(rel, self.original[rel])
            if isinstance(current, tuple):
                continue
            kind = kind_of(rel)
            op = self.mutator._pick(data, OPS[kind], "op")
            new, desc = getattr(self.mutator, f"op_{op}")(data, current, kind)
            changes[rel] = new
            descs.append(f"{rel}: {desc}")
            self.stats["ops"][op] = self.stats["ops"].get(op, 0) + 1
        return changes, descs

    def _new_file(self, data) -> tuple[str, bytes]:
        where = self.mutator._pick(data, ["specs/stray.yaml", "specs/unknown/x.yaml", "specs/workloads/copy.yaml",
                                          "specs/systems/agentic-copy.yaml", "specs/editions/copy.yml",
                                          "specs/workloads/triage.ap-inbox/extra.yaml"], "where")
        src = self.mutator._pick(data, [t for t in self.targets if t.endswith(".yaml")], "src")
        return where, self.original[src]

    def run_one(self, data) -> None:
        changes, descs = self.draw_changes(data)
        from hypothesis import strategies as st
        check = data.draw(st.booleans(), label="check")
        n = self.stats["examples"] + 1
        self.apply(changes)
        self.beat(state="busy", example=n, ops=descs, check=check, started=time.time(),
                  deadline=time.time() + self.args.timeout + self.args.hard_limit)
        start = time.perf_counter()
        outcome, error = "ok", None
        result = None
        try:
            with Watchdog(self.args.timeout):
                result = self.compile_project(self.project, check=check)
                rendered = self.render(result)
        except ExampleTimeout:
            outcome = "hang"
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - anything escaping is the finding
            outcome, error = "crash", exc
        elapsed = time.perf_counter() - start
        self.beat(state="idle", example=n)
        self.stats["examples"] = n
        self.stats["seconds"] += elapsed
        key = "check" if check else "compile"
        self.stats["check_mode"][key] = self.stats["check_mode"].get(key, 0) + 1
        for rel in changes:
            self.stats["files"][rel] = self.stats["files"].get(rel, 0) + 1
        slow = self.stats["slowest"]
        if slow is None or elapsed > slow["seconds"]:
            self.stats["slowest"] = {"seconds": elapsed, "example": n, "ops": descs, "check": check, "outcome": outcome}
        if outcome == "ok":
            items = result.diagnostics.items
            codes = Counter(d.code for d in items)
            for code, cnt in codes.items():
                self.stats["codes"][code] = self.stats["codes"].get(code, 0) + 1
                self.stats["occurrences"][code] = self.stats["occurrences"].get(code, 0) + cnt
                if code not in self.CODES:
                    self.stats["undocumented"][code] = descs
            kind = "errors" if result.diagnostics.has_errors else ("warnings only" if items else "clean")
            self.stats["outcomes"][kind] = self.stats["outcomes"].get(kind, 0) + 1
            self.restore(changes, generated=not check and bool(result.changed))
        else:
            self.stats["outcomes"][outcome] = self.stats["outcomes"].get(outcome, 0) + 1
            if outcome == "crash":
                self.record_crash(error, changes, descs, check)
            else:
                self.record_hang(changes, descs, check, elapsed)
            self.restore(changes, generated=True)
        self.save_stats()

    def render(self, result) -> dict[str, int]:
        """What the CLI prints, in every format, as UTF-8 (strict: a lone surrogate would crash stdout)."""
        diags = result.diagnostics.sorted()
        for d in diags:
            if not re.fullmatch(r"LRC\d{4}", d.code) or d.severity not in ("error", "warning"):
                raise AssertionError(f"malformed diagnostic {d!r}")
        sizes = {}
        for fmt, text in (("text", self.printer.text(diags)), ("json", self.printer.as_json(diags)), ("github", self.printer.github(diags))):
            sizes[fmt] = len(text.encode("utf-8"))
        json.loads(self.printer.as_json(diags))
        return sizes

    # -- findings ------------------------------------------------------------------------------
    @staticmethod
    def signature(exc: BaseException) -> str:
        tb = traceback.extract_tb(exc.__traceback__)
        ours = [f for f in tb if f.filename.startswith(str(REPO)) and "/benchmarks/" not in f.filename and "/.venv/" not in f.filename]
        where = ours[-1] if ours else (tb[-1] if tb else None)
        loc = f"{Path(where.filename).relative_to(REPO) if where.filename.startswith(str(REPO)) else where.filename}:{where.lineno}" if where else "?"
        return f"{type(exc).__name__} at {loc}"

    def _save_project(self, folder: Path, changes: dict[str, Any], check: bool, descs: list[str], note: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        proj = folder / "project"
        if proj.exists():
            shutil.rmtree(proj)
        _copy_tree_safely(self.project, proj)
        (folder / "mutations.txt").write_text("\n".join(descs) + f"\ncheck={check}\n", encoding="utf-8")
        (folder / "note.txt").write_text(note, encoding="utf-8")
        (folder / "repro.py").write_text(REPRO.format(check=check), encoding="utf-8")
        return folder

    def record_crash(self, exc: BaseException, changes, descs, check) -> None:
        sig = self.signature(exc)
        known = next((c for c in self.stats["crashes"] if c["signature"] == sig), None)
        if known:
            known["count"] += 1
            return
        entry = {"signature": sig, "count": 1, "exception": f"{type(exc).__name__}: {str(exc)[:300]}", "ops": descs, "check": check,
                 "traceback": "".join(traceback.format_exception(exc))[-4000:], "reproducer": None, "minimal": None}
        self.stats["crashes"].append(entry)
        if len(self.stats["crashes"]) > MAX_SAVED_CRASHES:
            return
        folder = self._save_project(self.out / f"crash-{len(self.stats['crashes'])}", changes, check, descs, entry["traceback"])
        (folder / "traceback.txt").write_text(entry["traceback"], encoding="utf-8")
        entry["reproducer"] = str(folder)
        entry["minimal"] = self.minimize(folder, changes, check, sig)
        self.beat(state="idle")
        self.save_stats()

    def record_hang(self, changes, descs, check, elapsed) -> None:
        n = len(self.stats["hangs"]) + 1
        entry = {"seconds": elapsed, "ops": descs, "check": check, "reproducer": None, "rerun": None}
        self.stats["hangs"].append(entry)
        if n > MAX_SAVED_CRASHES:
            return
        folder = self._save_project(self.out / f"hang-{n}", changes, check, descs,
                                    f"interrupted after {elapsed:.1f} s (limit {self.args.timeout} s)\n")
        entry["reproducer"] = str(folder)
        if n > 2:
            entry["rerun"] = "not re-run (only the first two hangs are)"
            return
        # How long does it really take? Re-run once with a longer limit (no cache).
        self.beat(state="busy", example=self.stats["examples"], ops=descs + ["(re-run of a hang)"], check=check,
                  started=time.time(), deadline=time.time() + self.args.hard_limit + 10)
        start = time.perf_counter()
        try:
            with Watchdog(self.args.hard_limit):
                self._quiet_compile(folder / "project", check)
            entry["rerun"] = f"finished in {time.perf_counter() - start:.1f} s on re-run"
        except ExampleTimeout:
            entry["rerun"] = f"still running after {self.args.hard_limit:.0f} s on re-run"
        except BaseException as exc:  # noqa: BLE001
            entry["rerun"] = f"re-run raised {type(exc).__name__}: {exc}"
        self.beat(state="idle")
        self.save_stats()

    def _quiet_compile(self, project: Path, check: bool):
        old = os.environ.get("LRC_NO_CACHE")
        os.environ["LRC_NO_CACHE"] = "1"
        try:
            return self.compile_project(project, check=check)
        finally:
            if old is None:
                os.environ.pop("LRC_NO_CACHE", None)
            else:
                os.environ["LRC_NO_CACHE"] = old

    def minimize(self, folder: Path, changes, check: bool, sig: str) -> str | None:
        """Line-level delta debugging of each mutated text file, bounded in time; the result is
        saved as <folder>/minimal/ with a diff against the original file."""
        texts = [rel for rel, v in changes.items() if isinstance(v, bytes)]
        if not texts:
            return None
        work = folder / "minimal"
        if work.exists():
            shutil.rmtree(work)
        _copy_tree_safely(folder / "project", work / "project")
        (work / "repro.py").write_text(REPRO.format(check=check), encoding="utf-8")
        proj = work / "project"
        pristine_gen = self.pristine_generated
        budget = min(MINIMIZE_SECONDS, MINIMIZE_TOTAL - self.minimize_spent)
        if budget <= 0:
            return None
        began = time.monotonic()
        deadline = began + budget
        self.beat(state="busy", example=self.stats["examples"], ops=["(minimizing a crash)"], check=check,
                  started=time.time(), deadline=time.time() + MINIMIZE_SECONDS + 2 * self.args.timeout + 10)

        def reproduces() -> bool:
            try:
                with Watchdog(self.args.timeout * 2):
                    res = self._quiet_compile(proj, check)
                    self.render(res)
                return False
            except ExampleTimeout:
                return False
            except BaseException as exc:  # noqa: BLE001
                return self.signature(exc) == sig
            finally:
                if not check:
                    shutil.rmtree(proj / "generated", ignore_errors=True)
                    shutil.copytree(pristine_gen, proj / "generated")

        if not reproduces():
            (work / "note.txt").write_text("the crash did not reproduce without the compile cache / in a fresh copy\n")
            return f"{work} (did not reproduce in a fresh copy: depends on cache or state)"
        try:
            return self._reduce(work, proj, texts, reproduces, deadline)
        finally:
            self.minimize_spent += time.monotonic() - began

    def _reduce(self, work: Path, proj: Path, texts: list[str], reproduces, deadline: float) -> str:
        for rel in texts:
            path = proj / rel
            if rel.endswith(".json") and self._reduce_json(path, reproduces, deadline):
                self._write_diff(work, rel, path.read_bytes())
                continue
            lines = path.read_bytes().split(b"\n")
            chunk = max(1, len(lines) // 2)
            while chunk >= 1 and time.monotonic() < deadline:
                i, removed = 0, False
                while i < len(lines) and time.monotonic() < deadline:
                    trial = lines[:i] + lines[i + chunk:]
                    path.write_bytes(b"\n".join(trial))
                    if reproduces():
                        lines, removed = trial, True
                    else:
                        i += chunk
                path.write_bytes(b"\n".join(lines))
                if not removed:
                    chunk //= 2
            self._write_diff(work, rel, b"\n".join(lines))
        return str(work)

    def _write_diff(self, work: Path, rel: str, new: bytes) -> None:
        orig = self.original.get(rel, b"")
        diff = difflib.unified_diff(_decode(orig).split("\n"), _decode(new).split("\n"),
                                    f"a/{rel}", f"b/{rel} (minimized)", lineterm="", n=1)
        (work / (rel.replace("/", "__") + ".diff")).write_text("\n".join(diff) + "\n", encoding="utf-8", errors="surrogateescape")

    @staticmethod
    def _reduce_json(path: Path, reproduces, deadline: float) -> bool:
        """Greedy structural reduction of a JSON file: drop every key or item the crash does not need."""
        try:
            tree = json.loads(path.read_bytes())
        except ValueError:
            return False

        def paths(node, prefix):
            if isinstance(node, dict):
                for k in list(node):
                    yield prefix + [k]
                    yield from paths(node[k], prefix + [k])
            elif isinstance(node, list):
                for i in range(len(node)):
                    yield prefix + [i]
                    yield from paths(node[i], prefix + [i])

        def dump(t):
            path.write_text(json.dumps(t, indent=1, ensure_ascii=False), encoding="utf-8", errors="surrogateescape")

        changed = True
        while changed and time.monotonic() < deadline:
            changed = False
            for ptr in list(paths(tree, [])):
                if time.monotonic() >= deadline:
                    break
                parent = tree
                try:
                    for k in ptr[:-1]:
                        parent = parent[k]
                    old = parent[ptr[-1]]
                except (KeyError, IndexError, TypeError):
                    continue
                trial = json.loads(json.dumps(tree))
                tp = trial
                for k in ptr[:-1]:
                    tp = tp[k]
                del tp[ptr[-1]]
                dump(trial)
                if reproduces():
                    tree, changed = trial, True
                    break
                del old
        dump(tree)
        return True

    # -- the loop ------------------------------------------------------------------------------
    def baseline(self) -> None:
        """Compile the unmutated copy once (settling generated/); if only the code gate refuses
        it (runtime/ edited without bumps), forget the copy's code versions and compile again, so
        mutated specs can reach every stage."""
        start = time.perf_counter()
        res = self.compile_project(self.project, check=False)
        elapsed = time.perf_counter() - start
        errors = sorted({d.code for d in res.diagnostics.items if d.severity == "error"})
        note = None
        if errors and set(errors) <= CODE_GATE_CODES:
            dropped = forget_code_versions(self.project)
            res = self.compile_project(self.project, check=False)
            note = (f"the working tree's runtime/ fails the code gate ({', '.join(errors)}); the scratch ledger forgot its "
                    f"{dropped} code entries")
            errors = sorted({d.code for d in res.diagnostics.items if d.severity == "error"})
        shutil.rmtree(self.pristine_generated)
        shutil.copytree(self.project / "generated", self.pristine_generated)  # settled state
        gen = self.project / "generated"
        self.gen_targets = sorted(p.relative_to(self.project).as_posix() for p in gen.rglob("*")
                                  if p.is_file() and (p.name in ("ledger.jsonl", "plan.lock") or p.suffix == ".txt"))
        for rel in self.gen_targets:
            self.original[rel] = (self.project / rel).read_bytes()
        if self.stats["baseline"] is None:
            self.stats["baseline"] = {"seconds": elapsed, "errors": errors, "note": note,
                                      "warnings": sorted({d.code for d in res.diagnostics.items if d.severity == "warning"})}

    def loop(self, until: float) -> None:
        from hypothesis import HealthCheck, Phase, given, settings, strategies as st
        from hypothesis import seed as hseed

        signal.signal(signal.SIGUSR1, _on_timeout)
        self.beat(state="busy", ops=["(baseline compile)"], started=time.time(), deadline=time.time() + 120)
        self.baseline()
        self.beat(state="idle")
        self.save_stats()

        # Small chunks, and the clock is read only between them: a test function that stops
        # drawing early depending on the time would make hypothesis's generation look flaky.
        @settings(max_examples=8, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @given(st.data())
        def chunk(data):
            try:
                self.run_one(data)
            except (ExampleTimeout, KeyboardInterrupt):
                raise
            except Exception:  # a bug of this script, not of lrc: count it, show the first, go on
                self.stats["internal_errors"] = self.stats.get("internal_errors", 0) + 1
                if self.stats["internal_errors"] <= 3:
                    traceback.print_exc()

        if self.args.seed is not None:
            chunk = hseed(self.args.seed + self.stats["workers"])(chunk)
        self.stats["workers"] += 1
        last = time.time()
        while time.time() < until:
            chunk()
            if time.time() - last > 15:
                last = time.time()
                print(f"  ... {self.stats['examples']} examples, {len(self.stats['codes'])} codes, "
                      f"{len(self.stats['crashes'])} crash signatures, {len(self.stats['hangs'])} hangs", file=sys.stderr, flush=True)
        self.save_stats()

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


REPRO = '''\
"""Reproduces one fuzz finding: run with the project's interpreter, from anywhere:
    /work/main/.venv/bin/python repro.py
"""
import os, sys, traceback
from pathlib import Path
os.environ["LRC_NO_CACHE"] = "1"
from lrc.compiler.pipeline import compile_project
from lrc.compiler import printer
root = Path(__file__).resolve().parent / "project"
result = compile_project(root, check={check})
print(printer.text(result.diagnostics.sorted()))
print("no exception escaped compile_project")
'''


def worker_main(args) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    w = Worker(args)
    try:
        w.loop(args.until)
    finally:
        w.save_stats()
        w.close()
    return 0


# ==============================================================================================
# the supervisor: runs the worker, kills it on a hard hang, prints the report
# ==============================================================================================

def supervise(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("stats.json", "heartbeat.json"):
        (out / stale).unlink(missing_ok=True)
    until = time.time() + args.seconds
    hard_kills: list[dict] = []  # examples the worker could not interrupt (killed by this process)
    deaths: list[dict] = []  # the worker died by a signal (segfault, OOM killer) during an example
    stalls: list[str] = []  # problems of this harness, not of lrc
    restarts = 0
    wall = time.time()
    while time.time() < until and restarts <= 3:
        cmd = [sys.executable, __file__, "--worker", "--until", str(until), "--out", str(out), "--timeout", str(args.timeout),
               "--hard-limit", str(args.hard_limit)] + (["--seed", str(args.seed)] if args.seed is not None else []) \
            + (["--self-test", args.self_test] if args.self_test and restarts == 0 else [])
        proc = subprocess.Popen(cmd)
        kind, info = _watch(proc, out, len(hard_kills) + 1)
        if kind == "exit" and info == 0:
            break
        restarts += 1
        if kind == "hard-hang":
            hard_kills.append(info)
            print(f"  !! worker stuck in one example for {info['seconds']:.0f} s (not interruptible): killed; "
                  f"reproducer {info['reproducer']}", file=sys.stderr, flush=True)
        elif kind == "stall":
            stalls.append(info)
        elif info < 0:
            hb = _read_json(out / "heartbeat.json") or {}
            deaths.append({"signal": -info, "ops": hb.get("ops") if hb.get("state") == "busy" else None})
            print(f"  !! worker killed by signal {-info}", file=sys.stderr, flush=True)
        else:
            stalls.append(f"worker exited {info} (a bug of this script: see its traceback above)")
    wall = time.time() - wall
    stats = _read_json(out / "stats.json") or {}
    return report(stats, hard_kills, deaths, wall, args, out, stalls)


def _watch(proc: subprocess.Popen, out: Path, n: int) -> tuple[str, Any]:
    """Wait for the worker; kill it when the heartbeat's deadline passes."""
    started = time.time()
    while proc.poll() is None:
        time.sleep(0.25)
        hb = _read_json(out / "heartbeat.json")
        mine = bool(hb and hb.get("pid") == proc.pid)
        if not mine:
            if time.time() - started > 120:
                proc.kill()
                proc.wait()
                return "stall", "the worker never reported (start-up stalled)"
            continue
        if time.time() <= hb["deadline"]:
            continue
        if hb.get("state") != "busy":
            proc.kill()
            proc.wait()
            _cleanup_worker(hb)
            return "stall", f"the harness stalled between examples for {time.time() - hb['time']:.0f} s (a bug of this script)"
        folder = out / f"hard-hang-{n}"
        try:
            _copy_tree_safely(Path(hb["project"]), folder / "project")
        except Exception as exc:  # noqa: BLE001
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "copy-failed.txt").write_text(str(exc))
        proc.kill()
        proc.wait()
        _cleanup_worker(hb)
        (folder / "mutations.txt").write_text("\n".join(hb.get("ops") or []) + f"\ncheck={hb.get('check')}\n")
        (folder / "repro.py").write_text(REPRO.format(check=hb.get("check")), encoding="utf-8")
        return "hard-hang", {"seconds": time.time() - hb["started"], "ops": hb.get("ops"), "check": hb.get("check"),
                             "reproducer": str(folder)}
    return "exit", proc.returncode


def _cleanup_worker(hb: dict) -> None:
    """Remove the scratch folder of a worker that was killed (it could not clean up itself)."""
    scratch = Path(hb.get("project", "")).parent
    if scratch.name.startswith("lrc-fuzz-work-"):
        shutil.rmtree(scratch, ignore_errors=True)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _copy_tree_safely(src: Path, dest: Path) -> None:
    def copy(s, d, *, follow_symlinks=True):
        if Path(s).is_fifo():
            os.mkfifo(d)
            return d
        return shutil.copy2(s, d, follow_symlinks=follow_symlinks)
    shutil.copytree(src, dest, symlinks=True, copy_function=copy, ignore=shutil.ignore_patterns(".lrc-cache"))


def report(stats: dict, hard_kills: list[dict], deaths: list[dict], wall: float, args, out: Path, stalls: list[str]) -> int:
    from lrc.compiler.codes import CODES

    n = stats.get("examples", 0)
    print(f"lrc fuzz: {wall:.0f} s wall, {n} examples ({n / max(stats.get('seconds', 1e-9), 1e-9):.1f}/s of compile time), "
          f"per-example timeout {args.timeout:g} s, workers {stats.get('workers', 0)}, seed {args.seed if args.seed is not None else 'random'}")
    base = stats.get("baseline") or {}
    print(f"baseline (unmutated project): compile {base.get('seconds', 0):.2f} s, errors {base.get('errors') or 'none'}, "
          f"warnings {base.get('warnings') or 'none'}")
    if base.get("note"):
        print(f"  note: {base['note']}")
    print(f"modes: {stats.get('check_mode')}; outcomes: {stats.get('outcomes')}")
    codes = stats.get("codes", {})
    print(f"distinct diagnostic codes seen: {len(codes)} (examples with the code / occurrences)")
    for code in sorted(codes):
        title = CODES[code].title if code in CODES else "NOT IN THE CATALOG"
        print(f"  {code}  {codes[code]:>5}  {stats['occurrences'][code]:>6}  {title}")
    unseen = sorted(set(CODES) - set(codes))
    print(f"catalog codes the fuzz did not reach ({len(unseen)}): {', '.join(unseen) or 'none'}")
    if stats.get("undocumented"):
        print(f"codes emitted but missing from the catalog: {sorted(stats['undocumented'])}")
    ops = stats.get("ops", {})
    print("mutations applied: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1])))
    crashes = stats.get("crashes", [])
    print(f"crashes: {sum(c['count'] for c in crashes)} in {len(crashes)} distinct signature(s)")
    for c in crashes:
        print(f"  - {c['signature']} x{c['count']}: {c['exception']}")
        print(f"    mutations (check={c['check']}): " + " | ".join(c["ops"])[:600])
        print(f"    reproducer: {c['reproducer']}  (run: {sys.executable} {c['reproducer']}/repro.py)")
        if c.get("minimal"):
            print(f"    minimized:  {c['minimal']}")
    hangs = stats.get("hangs", [])
    print(f"hangs (> {args.timeout:g} s, interrupted): {len(hangs)}")
    for h in hangs:
        print(f"  - {h['seconds']:.1f} s, {h.get('rerun')}: " + " | ".join(h["ops"])[:600])
        print(f"    reproducer: {h['reproducer']}")
    print(f"hard hangs (not interruptible, worker killed): {len(hard_kills)}")
    for h in hard_kills:
        print(f"  - {h['seconds']:.0f} s: " + " | ".join(h.get("ops") or [])[:600] + (f"  (worker exit {h['exit']})" if "exit" in h else ""))
        print(f"    reproducer: {h['reproducer']}")
    if stats.get("internal_errors"):
        print(f"fuzzer-internal errors (bugs of this script, not of lrc): {stats['internal_errors']}")
    files = stats.get("files", {})
    print(f"files mutated: {len(files)} distinct paths")
    slow = stats.get("slowest")
    if slow:
        print(f"slowest example: {slow['seconds']:.2f} s (#{slow['example']}, check={slow['check']}, {slow['outcome']}): " + " | ".join(slow["ops"])[:500])
    print(f"artifacts: {out}")
    print(f"worker deaths by a signal (segfault, OOM killer): {len(deaths)}")
    for d in deaths:
        print(f"  - signal {d['signal']} during: " + " | ".join(d.get("ops") or ["(not in an example)"])[:600])
    for stall in stalls:
        print(f"HARNESS PROBLEM: {stall}")
    failed = bool(crashes or hangs or hard_kills or deaths)
    print("RESULT: " + ("FAIL (crash or hang found)" if failed else
                        "OK: diagnostics only, no crash, no hang" + (" (but the harness stalled: see above)" if stalls else "")))
    return 1 if failed else (2 if stalls else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="fuzzing time (default 60)")
    ap.add_argument("--timeout", type=float, default=5, help="per-example limit in seconds: beyond it, a hang (default 5)")
    ap.add_argument("--hard-limit", type=float, default=20, help="re-run limit for a hang, and the supervisor's kill limit (default 30)")
    ap.add_argument("--seed", type=int, help="hypothesis seed (default random)")
    ap.add_argument("--out", help="where findings go (default /tmp/lrc-fuzz-<time>)")
    ap.add_argument("--self-test", choices=["crash", "hang", "hard-hang"], help="inject a fault into the first example (checks this harness)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        sys.exit(worker_main(args))
    args.out = args.out or f"/tmp/lrc-fuzz-{time.strftime('%Y%m%d-%H%M%S')}"
    sys.exit(supervise(args))


if __name__ == "__main__":
    main()
