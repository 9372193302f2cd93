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
import errno
import math
import os
import re
import stat
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


try:  # libyaml through ruamel.yaml.clib (requirements.lock pins it); the pure parser stands in without it
    from _ruamel_yaml import CParser as _CParser
except ImportError:  # pragma: no cover - the locked environment has it
    _CParser = None

_FAST_PATH = True
"""Private switch: False forces today's pure path everywhere (pure parser, ruamel resolver and
constructor for every scalar). The equivalence tests compare both."""

_C_UNSAFE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
                       "|^[%]|^[.][.][.]|[|>][-+0-9]*#", re.M)
"""Texts the C parser does not see, because libyaml (a YAML 1.1 parser) and ruamel's pure
YAML 1.2 parser may disagree on them: tabs, CR, NEL/LS/PS line breaks, BOMs, control and
surrogate characters; directives; document end markers; a block scalar header that a comment
follows without a space (`|#`, refused by ruamel only). The pure parser takes them, as it
always did."""

def _c_events(text: str) -> list | None:
    """The events of `text` from libyaml when they provably equal the pure parser's and the
    document is clean; None to use the pure parser (which also words every diagnostic).

    Only a clean document is taken from libyaml: one document, no directive, tag, anchor,
    alias, merge key, empty plain scalar (libyaml marks an implied null where the next token
    starts, ruamel where the previous one ends), within the depth and node caps. Anything else,
    including any error libyaml raises, goes back to the pure parser, so the diagnostics are
    exactly the pure parser's and the spec language does not depend on the C extension.
    """
    if _CParser is None or not _FAST_PATH or _C_UNSAFE.search(text):
        return None
    out: list = []
    depth = nodes = documents = 0
    try:
        parser = _CParser(text)
        try:
            while parser.check_event():
                event = parser.get_event()
                out.append(event)
                cls = type(event)
                if cls is ev.ScalarEvent:
                    if event.anchor is not None or event.tag is not None:
                        return None
                    if not event.style and (event.value == "" or event.value == "<<"):
                        return None
                    nodes += 1
                elif cls is ev.MappingStartEvent or cls is ev.SequenceStartEvent:
                    if event.anchor is not None or event.tag is not None:
                        return None
                    nodes += 1
                    depth += 1
                    if depth > MAX_DEPTH:
                        return None
                elif cls is ev.MappingEndEvent or cls is ev.SequenceEndEvent:
                    depth -= 1
                elif cls is ev.DocumentStartEvent:
                    documents += 1
                    if documents > 1 or getattr(event, "version", None) or getattr(event, "tags", None):
                        return None
                elif cls is ev.DocumentEndEvent:
                    if getattr(event, "explicit", False):
                        return None
                elif cls is not ev.StreamStartEvent and cls is not ev.StreamEndEvent:
                    return None  # aliases, and anything unexpected
                if nodes > MAX_NODES:
                    return None
        finally:
            parser.dispose()
    except Exception:  # noqa: BLE001 - any refusal or failure of libyaml: the pure parser decides
        return None
    return out


def _pre_scan(text: str, path: str, diags: Diagnostics, events: list | None = None) -> bool:
    """Refuse directives, tags, anchors, aliases, merge keys and deep nesting. True if clean.

    A clean document libyaml agrees on is taken from the C parser (`_c_events`); otherwise
    the safe pure-Python parser (no comment gathering, which cost more than the rest of the
    compile) checks it and words the diagnostics. The events are kept in `events`, so the
    document is parsed once (twice only when it is refused or unusual).
    """
    fast = _c_events(text)
    if fast is not None:
        if events is not None:
            events.extend(fast)
        return True
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


_DEC_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})")
_DEC_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})[.][0-9]{1,17}")
_PLAIN_WORDS = ("true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~")
_PLAIN_RULES: tuple[frozenset, dict[str, Any]] | None = None


def _plain_rules() -> tuple[frozenset, dict[str, Any]] | None:
    """(first characters of ruamel's implicit YAML 1.2 rules, typed words), or None (no fast path).

    Both are read from the resolver and constructor a build would use, never restated: a plain
    scalar whose first character starts no implicit rule resolves to the default tag, a str;
    the words are typed by the slow path once. Decimal integers (`-?(0|[1-9]d*)`, at most 18
    digits) and decimals (`d.d`) resolve to int and float there too, whose constructors come
    down to `int(text)` and `sign * float(text)` for them; anything else takes the slow path.
    """
    global _PLAIN_RULES
    if _PLAIN_RULES is None:
        yaml = YAML(typ="safe", pure=True)
        resolver = yaml.resolver
        table = resolver.versioned_resolver
        tags = {ch: [str(tag) for tag, _ in rules] for ch, rules in table.items()}
        if (resolver.processing_version != (1, 2) or None in table or any(ch is None or len(ch) > 1 for ch in table if ch)
                or any(tags.get(d) != ["tag:yaml.org,2002:float", "tag:yaml.org,2002:int", "tag:yaml.org,2002:timestamp"]
                       for d in "0123456789")
                or any(tags.get(c) != ["tag:yaml.org,2002:float", "tag:yaml.org,2002:int"] for c in "-+")):
            _PLAIN_RULES = (frozenset(), {})  # an unexpected ruamel: the marker below disables the fast path
            return None
        builder = _Builder.__new__(_Builder)
        builder._yaml = yaml
        words = {w: builder._construct_slow(ev.ScalarEvent(None, None, (True, False), w)) for w in _PLAIN_WORDS}
        _PLAIN_RULES = (frozenset(ch for ch in table if ch), words)
    return _PLAIN_RULES if _PLAIN_RULES[0] else None


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
        self._yaml: YAML | None = None
        self._plain = _plain_rules() if _FAST_PATH else None

    @property
    def yaml(self) -> YAML:
        """A fresh safe loader of this build's own, made when a scalar first needs it."""
        if self._yaml is None:
            self._yaml = YAML(typ="safe", pure=True)
        return self._yaml

    def _surrogate(self, pointer: str, pos: tuple[int, int]) -> None:
        self.diags.error("LRC1007", "string holds a lone surrogate escape (e.g. \\ud800), which is not a Unicode character",
                         path=self.path, line=pos[0], column=pos[1], pointer=pointer,
                         hint="write the character itself, or escape a code point above U+FFFF as \\U0001F600")

    def _construct(self, event: ev.ScalarEvent) -> Any:
        plain = self._plain
        if plain is not None and event.tag is None:
            value = event.value
            if not event.implicit[0]:  # quoted or block scalar: the resolver's default tag, a str
                return value
            if value:
                first, words = plain
                if value[0] not in first:  # no implicit rule starts with this character: a str
                    return value
                if value in words:
                    return words[value]
                if _DEC_INT.fullmatch(value):
                    return int(value)
                if _DEC_FLOAT.fullmatch(value):
                    return float(value)
        return self._construct_slow(event)

    def _construct_slow(self, event: ev.ScalarEvent) -> Any:
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
                self.diags.error("LRC2001", f"integer {short_int(value)} is beyond 2^53, which has no canonical JSON form", path=self.path,
                                 line=pos[0], column=pos[1], pointer=pointer, hint="use a smaller number, or a string")
                return None
            return int(value)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                self.diags.error("LRC2001", "NaN and infinity are not allowed in specs", path=self.path,
                                 line=pos[0], column=pos[1], pointer=pointer)
                return None
            if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
                # 1.0 is the integer 1 to JSON Schema and to canonical JSON alike; keeping a float
                # would let `version: 1.0` pass validation yet never equal the 1 a reference pins.
                return int(value)
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
                    big = isinstance(key, int) and not isinstance(key, bool)  # str() of a 5000-digit int raises
                    self.diags.error("LRC2001", f"mapping keys must be strings, found {short_int(key) if big else repr(key)}", path=self.path,
                                     line=pos[0], column=pos[1], pointer=pointer_of(frame["parts"]), hint="quote the key")
                    name = short_int(key) if big else str(key)
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


def load_text(text: str, path: str, abspath: Path, diags: Diagnostics) -> SourceDoc | None:
    """Load YAML text that has already passed size and encoding checks (one parse, fresh parser).

    Not cached here: the compile cache remembers whole specs (compiler/units.py), keyed by
    their bytes and the bytes of every file they reference."""
    return _load_text(text, path, abspath, diags)


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


NOT_REGULAR = "not a regular file"


def read_bytes(path: Path | str, limit: int) -> bytes:
    """Up to `limit + 1` bytes of a regular file (one more than allowed shows it is too large),
    with the fewest system calls: open, fstat, read. Raises OSError, also for anything but a
    regular file: opened non-blocking, a FIFO or device planted in a pull request is refused
    instead of hanging the compiler."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        want = min(st.st_size, limit) + 1
        data = os.read(fd, want)
        if len(data) < want:
            return data  # the whole file: read stopped at its end
        parts, total = [data], len(data)
        while total <= limit:  # it grew since fstat, or reported no size: read on to the cap
            more = os.read(fd, limit + 1 - total)
            if not more:
                break
            parts.append(more)
            total += len(more)
        return b"".join(parts)
    finally:
        os.close(fd)


def read_capped(abspath: Path | str, path: str, diags: Diagnostics, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of a file, refused (with a diagnostic) beyond `limit` or when unreadable."""
    try:
        raw = read_bytes(abspath, limit)
        if len(raw) > limit:
            size = os.stat(abspath).st_size
            diags.error("LRC1006", f"file is {size} bytes; the cap is {limit}", path=path)
            return None
        return raw
    except OSError as exc:
        diags.error("LRC3004", f"cannot read file: {exc.strerror}", path=path)
        return None


def short_int(value: int) -> str:
    """An integer for a message: in full when short, else its first and last digits and their
    count. A hex, octal or binary literal of any length is an int to YAML, but Python refuses
    to print one beyond 4300 decimal digits (ValueError), so the message itself must not."""
    if value.bit_length() <= 200:
        return str(value)
    digits = int(value.bit_length() * 0.30103) + 1  # log10(2): the count, give or take one
    if digits > 4000:
        return f"{'-' if value < 0 else ''}0x{abs(value):x}"[:14] + f"... (about {digits} decimal digits)"
    text = str(abs(value))
    return f"{'-' if value < 0 else ''}{text[:8]}...{text[-4:]} ({len(text)} digits)"


def linked_folder(base: Path, path: Path) -> Path | None:
    """The first folder between `base` (excluded) and `path` (excluded) that is a symlink, or
    None. lrc writes and deletes only below folders it reached without a symlink: generated/
    and .lrc-cache/ arrive in pull requests, and `generated/demo -> ..` or `.lrc-cache -> ~`
    would otherwise make it write, or remove "stale" files, outside the project. A folder that
    does not exist yet ends the search (mkdir makes real folders)."""
    here = base
    for part in path.relative_to(base).parts[:-1]:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return here
        except FileNotFoundError:
            return None
        except OSError:
            return here  # unreadable: not a folder lrc may write below
    return None


def read_regular(path: Path | str, limit: int = 1 << 30) -> bytes | None:
    """The bytes of `path` if it is a regular file and no symlink; None otherwise (missing, a
    symlink, a FIFO, a folder, unreadable, larger than `limit`). For files lrc writes or keeps
    (generated/, the cache), where anything else is simply not the file lrc expects."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        data = read_bytes(path, limit)
    except (OSError, ValueError):
        return None
    return data if len(data) <= limit else None


def decode_text(raw: bytes, path: str, diags: Diagnostics) -> str | None:
    """UTF-8 text without a BOM, LF-normalized: the one text form every stage sees."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error("LRC1007", f"not UTF-8 (byte {exc.start})", path=path)
        return None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text_file(abspath: Path, path: str, diags: Diagnostics, limit: int = MAX_FILE_BYTES) -> str | None:
    """Read a UTF-8 file with a size cap; LF-normalized."""
    raw = read_capped(abspath, path, diags, limit)
    return None if raw is None else decode_text(raw, path, diags)


def load_bytes(raw: bytes, path: str, abspath: Path, diags: Diagnostics) -> SourceDoc | None:
    """A spec file's bytes -> its document (None, with diagnostics, if it cannot be one)."""
    text = decode_text(raw, path, diags)
    if text is None:
        return None
    doc = load_text(text, path, abspath, diags)
    if doc is not None and not text.startswith(MODELINE):
        diags.warning("LRC1009", "spec file does not start with the yaml-language-server schema modeline",
                      path=path, line=1, column=1, hint=f"add `{MODELINE}<relative path to its schema>` as the first line")
    return doc


def load_file(abspath: Path, path: str, diags: Diagnostics) -> SourceDoc | None:
    raw = read_capped(abspath, path, diags)
    return None if raw is None else load_bytes(raw, path, abspath, diags)
