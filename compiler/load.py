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
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml import events as ev

from lrc.compiler.diagnostics import Diagnostics, pointer_of

MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 40
MAX_NODES = 50_000
MODELINE = "# yaml-language-server: $schema="
MAX_SAFE_INTEGER = 2**53 - 1
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


def _pre_scan(text: str, path: str, diags: Diagnostics, events: list | None = None) -> bool:
    """Refuse directives, tags, anchors, aliases, merge keys and deep nesting. True if clean.

    Uses the safe pure-Python parser (no comment gathering, which cost more than the rest of
    the compile) and keeps the events in `events`, so the document is parsed exactly once.
    """
    ok = True
    depth = nodes = documents = 0
    expecting_key: list[bool | None] = []  # per open collection: mapping -> next node is a key?; sequence -> None

    def report(code: str, summary: str, mark, hint: str | None = None) -> None:
        nonlocal ok
        ok = False
        diags.error(code, summary, path=path, line=mark.line + 1, column=mark.column + 1, hint=hint)

    try:
        for event in YAML(typ="safe", pure=True).parse(text):
            if events is not None:
                events.append(event)
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
    """Turns the checked event stream into plain data and pointer -> position maps.

    Scalars are typed by ruamel's own YAML 1.2 resolver and safe constructor, exactly as a
    loader would type them; dates become ISO strings; duplicate and non-string keys, NaN,
    infinity and lone surrogates are reported where they stand.
    """

    def __init__(self, path: str, diags: Diagnostics):
        self.path = path
        self.diags = diags
        self.values: dict[str, tuple[int, int]] = {}
        self.keys: dict[str, tuple[int, int]] = {}
        self.yaml = YAML(typ="safe", pure=True)

    def _surrogate(self, pointer: str, pos: tuple[int, int]) -> None:
        self.diags.error("LRC1007", "string holds a lone surrogate escape (e.g. \\ud800), which is not a Unicode character",
                         path=self.path, line=pos[0], column=pos[1], pointer=pointer,
                         hint="write the character itself, or escape a code point above U+FFFF as \\U0001F600")

    def _construct(self, event: ev.ScalarEvent) -> Any:
        tag = self.yaml.resolver.resolve(ScalarNode, event.value, event.implicit)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        try:
            return self.yaml.constructor.construct_object(node, deep=True)
        except (YAMLError, ValueError, OverflowError):  # e.g. 2026-13-45 looks like a date but is none: keep the text
            return event.value

    def _scalar(self, value: Any, pointer: str, pos: tuple[int, int]) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if abs(value) > MAX_SAFE_INTEGER:
                self.diags.error("LRC2001", f"integer {value} is beyond 2^53, which has no canonical JSON form", path=self.path,
                                 line=pos[0], column=pos[1], pointer=pointer, hint="use a smaller number, or a string")
                return None
            return int(value)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                self.diags.error("LRC2001", "NaN and infinity are not allowed in specs", path=self.path,
                                 line=pos[0], column=pos[1], pointer=pointer)
                return None
            return float(value)
        if isinstance(value, str):
            if SURROGATE.search(value):
                self._surrogate(pointer, pos)
                return SURROGATE.sub("\ufffd", value)
            return str(value)
        if isinstance(value, (_dt.date, _dt.datetime)):
            return value.isoformat()
        self.diags.error("LRC1003", f"unsupported YAML value of type {type(value).__name__}", path=self.path,
                         line=pos[0], column=pos[1], pointer=pointer)
        return None

    def build(self, events: list) -> tuple[bool, Any]:
        """(ok, data) from the events of one document."""
        root: Any = None
        stack: list[dict[str, Any]] = []
        for event in events:
            if isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
                stack.pop()
                continue
            if not isinstance(event, (ev.ScalarEvent, ev.MappingStartEvent, ev.SequenceStartEvent)):
                continue
            pos = (event.start_mark.line + 1, event.start_mark.column + 1)
            frame = stack[-1] if stack else None
            if frame is not None and frame["kind"] == "map" and frame["key"] is None:
                if not isinstance(event, ev.ScalarEvent):
                    self.diags.error("LRC2001", "mapping keys must be strings, found a collection", path=self.path,
                                     line=pos[0], column=pos[1], pointer=pointer_of(frame["parts"]), hint="use a plain string key")
                    return False, None
                key = self._construct(event)
                name = key
                if isinstance(key, str) and SURROGATE.search(key):
                    self._surrogate(pointer_of(frame["parts"]), pos)
                    name = SURROGATE.sub("\ufffd", key)
                if not isinstance(key, str):
                    self.diags.error("LRC2001", f"mapping keys must be strings, found {key!r}", path=self.path,
                                     line=pos[0], column=pos[1], pointer=pointer_of(frame["parts"]), hint="quote the key")
                    name = str(key)
                child = pointer_of(frame["parts"] + [name])
                if name in frame["value"]:
                    first = self.keys.get(child, (0, 0))[0]
                    self.diags.error("LRC1002", f'duplicate key "{name}" (first at line {first})', path=self.path,
                                     line=pos[0], column=pos[1], pointer=child, hint="keep one occurrence of the key")
                    return False, None
                self.keys[child] = pos
                frame["key"] = name
                continue
            if frame is None:
                parts: list = []
            elif frame["kind"] == "map":
                parts = frame["parts"] + [frame["key"]]
            else:
                parts = frame["parts"] + [len(frame["value"])]
            pointer = pointer_of(parts)
            self.values[pointer] = pos
            if isinstance(event, ev.ScalarEvent):
                value = self._scalar(self._construct(event), pointer, pos)
            else:
                value = {} if isinstance(event, ev.MappingStartEvent) else []
            if frame is None:
                root = value
            elif frame["kind"] == "map":
                frame["value"][frame["key"]] = value
                frame["key"] = None
            else:
                frame["value"].append(value)
            if isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
                stack.append({"kind": "map" if isinstance(event, ev.MappingStartEvent) else "seq", "value": value, "parts": parts, "key": None})
        return True, root


CACHE: Any = None
"""The compiler's content-addressed cache (compiler/cache.py), when the pipeline sets one."""


def load_text(text: str, path: str, abspath: Path, diags: Diagnostics) -> SourceDoc | None:
    """Load YAML text that has already passed size and encoding checks (one parse, fresh parser)."""
    key = None
    if CACHE is not None:
        from lrc.compiler.cache import key_of

        key = key_of(text.encode("utf-8"))
        hit = CACHE.get("yaml", key)
        if hit is not None:
            return SourceDoc(path=path, abspath=abspath, text=text, data=hit["data"],
                             values={k: tuple(v) for k, v in hit["values"].items()},
                             keys={k: tuple(v) for k, v in hit["keys"].items()})
    before = len(diags.items)
    doc = _load_text(text, path, abspath, diags)
    if doc is not None and key is not None and len(diags.items) == before:
        CACHE.put("yaml", key, {"data": doc.data, "values": doc.values, "keys": doc.keys})
    return doc


def _load_text(text: str, path: str, abspath: Path, diags: Diagnostics) -> SourceDoc | None:
    events: list = []
    if not _pre_scan(text, path, diags, events):
        return None
    builder = _Builder(path, diags)
    ok, data = builder.build(events)
    if not ok:
        return None
    if not isinstance(data, dict):
        diags.error("LRC1008", "the top level of a spec must be a mapping", path=path, line=1, column=1)
        return None
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
