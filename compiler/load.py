"""Stage 1: bytes -> plain data plus a source map, refusing what specs must not contain.

Specs arrive in pull requests, so they are hostile until proven otherwise. Before any object
is built, an event pre-scan refuses directives, tags, anchors, aliases, merge keys, several
documents and excessive depth; sizes are capped. Then a *fresh* round-trip loader (state
leaks between loads otherwise) builds the tree, only to record 1-based line/column for every
JSON pointer; the data handed on is plain dict/list/str/int/float/bool/None. Dates become
ISO strings so YAML 1.2 timestamp typing cannot surprise anyone.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml import events as ev

from lrc.compiler.diagnostics import Diagnostics, pointer_of

MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 40
MAX_NODES = 50_000
MODELINE = "# yaml-language-server: $schema="
SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone UTF-16 surrogate: YAML and JSON escapes (`\\ud800`) can produce one, but it is not
a Unicode character, has no UTF-8 form and so no canonical JSON form either."""


@dataclass
class SourceDoc:
    """One loaded spec file: its plain data and where every value came from."""

    path: str  # project-relative POSIX path
    abspath: Path
    text: str
    data: Any
    values: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer -> (line, col), 1-based
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer -> position of its key

    def locate(self, pointer: str) -> tuple[int, int]:
        """Position of the value at `pointer`, or of its nearest ancestor that exists."""
        probe = pointer
        while True:
            if probe in self.values:
                return self.values[probe]
            if not probe:
                return (1, 1)
            probe = probe.rsplit("/", 1)[0]

    def locate_key(self, pointer: str) -> tuple[int, int]:
        return self.keys.get(pointer) or self.locate(pointer)


def _pre_scan(text: str, path: str, diags: Diagnostics) -> bool:
    """Refuse directives, tags, anchors, aliases, merge keys and deep nesting. True if clean."""
    ok = True
    depth = nodes = documents = 0
    expecting_key: list[bool | None] = []  # per open collection: mapping -> next node is a key?; sequence -> None

    def report(code: str, summary: str, mark, hint: str | None = None) -> None:
        nonlocal ok
        ok = False
        diags.error(code, summary, path=path, line=mark.line + 1, column=mark.column + 1, hint=hint)

    try:
        for event in YAML(typ="rt").parse(text):
            if isinstance(event, ev.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    report("LRC1008", "a spec file holds one YAML document; found another", event.start_mark)
                if getattr(event, "version", None) or getattr(event, "tags", None):
                    report("LRC1005", "YAML directives (%YAML, %TAG) are not allowed in specs", event.start_mark)
                continue
            if isinstance(event, ev.AliasEvent):
                report("LRC1004", f"alias *{event.anchor} is not allowed in specs", event.start_mark,
                       "write the value out, or reference another spec by its pinned id")
                continue
            if isinstance(event, (ev.ScalarEvent, ev.MappingStartEvent, ev.SequenceStartEvent)):
                nodes += 1
                if nodes > MAX_NODES:
                    report("LRC1006", f"more than {MAX_NODES} YAML nodes", event.start_mark)
                    return False
                if event.anchor:
                    report("LRC1004", f"anchor &{event.anchor} is not allowed in specs", event.start_mark,
                           "anchors and aliases hide repetition and enable alias bombs; write the value out")
                tag = getattr(event, "tag", None)
                if tag is not None:
                    shown = tag if isinstance(tag, str) else getattr(tag, "value", str(tag))
                    report("LRC1003", f"explicit tag {shown} is not allowed in specs", event.start_mark,
                           "specs are plain data: remove the tag")
                is_key = bool(expecting_key) and expecting_key[-1] is True
                if expecting_key and expecting_key[-1] is not None:
                    expecting_key[-1] = not expecting_key[-1]
                if is_key and isinstance(event, ev.ScalarEvent) and event.value == "<<" and event.style is None:
                    report("LRC1004", "merge key << is not allowed in specs", event.start_mark)
                if isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
                    expecting_key.append(True if isinstance(event, ev.MappingStartEvent) else None)
                    depth += 1
                    if depth > MAX_DEPTH:
                        report("LRC1006", f"nesting deeper than {MAX_DEPTH} levels", event.start_mark)
                        return False
            elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
                depth -= 1
                expecting_key.pop()
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        diags.error("LRC1001", f"YAML syntax error: {exc.problem or exc.context}", path=path,
                    line=(mark.line + 1) if mark else None, column=(mark.column + 1) if mark else None)
        return False
    except YAMLError as exc:  # pragma: no cover - unmarked errors are rare
        diags.error("LRC1001", f"YAML syntax error: {exc}", path=path)
        return False
    return ok


class _Builder:
    """Turns a ruamel round-trip tree into plain data and a pointer -> position map."""

    def __init__(self, path: str, diags: Diagnostics):
        self.path = path
        self.diags = diags
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}

    def _surrogate(self, pointer: str, pos: tuple[int, int]) -> None:
        self.diags.error("LRC1007", "string holds a lone surrogate escape (e.g. \\ud800), which is not a Unicode character",
                         path=self.path, line=pos[0], column=pos[1], pointer=pointer,
                         hint="write the character itself, or escape a code point above U+FFFF as \\U0001F600")

    def build(self, node: Any, parts: list, pos: tuple[int, int]) -> Any:
        pointer = pointer_of(parts)
        self.values[pointer] = pos
        if isinstance(node, CommentedMap):
            out: dict[str, Any] = {}
            for key in node:
                kpos = node.lc.key(key)
                vpos = node.lc.value(key)
                name = key
                if isinstance(key, str) and SURROGATE.search(key):
                    self._surrogate(pointer, (kpos[0] + 1, kpos[1] + 1))
                    name = SURROGATE.sub("\ufffd", key)
                if not isinstance(key, str):
                    self.diags.error("LRC2001", f"mapping keys must be strings, found {key!r}", path=self.path,
                                     line=kpos[0] + 1, column=kpos[1] + 1, pointer=pointer,
                                     hint="quote the key")
                    name = str(key)  # the tree is still indexed by the original key
                child = parts + [name]
                self.keys[pointer_of(child)] = (kpos[0] + 1, kpos[1] + 1)
                out[name] = self.build(node[key], child, (vpos[0] + 1, vpos[1] + 1))
            return out
        if isinstance(node, CommentedSeq):
            items = []
            for i, value in enumerate(node):
                ipos = node.lc.item(i)
                items.append(self.build(value, parts + [i], (ipos[0] + 1, ipos[1] + 1)))
            return items
        if node is None or isinstance(node, bool):
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            if math.isnan(node) or math.isinf(node):
                self.diags.error("LRC2001", "NaN and infinity are not allowed in specs", path=self.path,
                                 line=pos[0], column=pos[1], pointer=pointer)
                return None
            return float(node)
        if isinstance(node, str):
            if SURROGATE.search(node):
                self._surrogate(pointer, pos)
                return SURROGATE.sub("\ufffd", str(node))
            return str(node)
        if isinstance(node, (_dt.date, _dt.datetime)):
            return node.isoformat()
        self.diags.error("LRC1003", f"unsupported YAML value of type {type(node).__name__}", path=self.path,
                         line=pos[0], column=pos[1], pointer=pointer)
        return None


def load_text(text: str, path: str, abspath: Path, diags: Diagnostics) -> SourceDoc | None:
    """Load YAML text that has already passed size and encoding checks."""
    if not _pre_scan(text, path, diags):
        return None
    yaml = YAML(typ="rt")  # fresh per file: a %YAML directive would leak into the next load
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        dup = "duplicate key" in str(exc).lower() or type(exc).__name__ == "DuplicateKeyError"
        code = "LRC1002" if dup else "LRC1001"
        summary = f"duplicate key: {exc.problem}" if dup else f"YAML error: {exc.problem or exc.context}"
        diags.error(code, summary.strip(), path=path,
                    line=(mark.line + 1) if mark else None, column=(mark.column + 1) if mark else None,
                    hint="keep one occurrence of the key" if dup else None)
        return None
    except YAMLError as exc:  # pragma: no cover
        diags.error("LRC1001", f"YAML error: {exc}", path=path)
        return None
    if not isinstance(tree, CommentedMap):
        diags.error("LRC1008", "the top level of a spec must be a mapping", path=path, line=1, column=1)
        return None
    builder = _Builder(path, diags)
    data = builder.build(tree, [], (tree.lc.line + 1, tree.lc.col + 1))
    return SourceDoc(path=path, abspath=abspath, text=text, data=data, values=builder.values, keys=builder.keys)


def read_text_file(abspath: Path, path: str, diags: Diagnostics, limit: int = MAX_FILE_BYTES) -> str | None:
    """Read a UTF-8 file with a size cap; LF-normalized."""
    try:
        size = abspath.stat().st_size
        if size > limit:
            diags.error("LRC1006", f"file is {size} bytes; the cap is {limit}", path=path)
            return None
        raw = abspath.read_bytes()
    except OSError as exc:
        diags.error("LRC3004", f"cannot read file: {exc.strerror}", path=path)
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error("LRC1007", f"not UTF-8 (byte {exc.start})", path=path)
        return None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def load_file(abspath: Path, path: str, diags: Diagnostics) -> SourceDoc | None:
    text = read_text_file(abspath, path, diags)
    if text is None:
        return None
    doc = load_text(text, path, abspath, diags)
    if doc is not None and not text.startswith(MODELINE):
        diags.warning("LRC1009", "spec file does not start with the yaml-language-server schema modeline",
                      path=path, line=1, column=1, hint=f"add `{MODELINE}<relative path to its schema>` as the first line")
    return doc
