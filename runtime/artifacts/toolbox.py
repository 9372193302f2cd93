"""The artifact toolbox: an agent's only hands on a task's workbook and deck (seed 000, issue 13).

Why it is built this way:

- A private copy. The task's input files are written into the run's own folder
  (`runfolder.RunFolder`: the file sandbox's path rules, O_NOFOLLOW, a manifest of names) and
  every tool works on that copy; the task's bytes are never touched. A path an agent names
  is a file of that manifest or an error.
- Every file opened is checked first. `safezip.inspect` refuses zip bombs, hostile XML
  (entities, DTDs: XXE, billion laughs), macros (`vbaProject.bin`, macro content types; a
  `.xlsm` / `.pptm` name is refused before it is read) and traversal paths, before openpyxl or
  python-pptx parses a byte; workbooks open with `keep_links=False`, so external links are
  never followed (they are listed by list_files) — nothing is ever executed or fetched.
- Bounded, typed, atomic calls. Every argument is checked (`toolargs`), every read and write
  has a bound (`toolargs.Limits`), every result is cut at `max_result_chars`. A refused call
  changes nothing and comes back as an error result (`is_error`); `call` never raises. If a
  tool fails unexpectedly half-way, the file is put back to its last saved state and the
  unsaved mutation records of that file are dropped, so the record always matches the file.
- Every mutation recorded. `mutations` is the trace's "file mutations": one
  `{"tool", "file", "location", "old", "new"}` per change — a cell `IS!G5` (old and new
  content: a formula's text or a value), its style `IS!G5 style`, a name `name "TaxRate"`,
  an insertion `IS!5:6` and each formula it shifted, a slide text `slide 4/Content
  Placeholder 2`, a table cell `slide 2/Key figures/r2c3`, chart data `slide 3/Revenue
  chart/data`, a new slide `slide 3` (old null, new its layout and title), a new chart
  `slide 3/Revenue chart` (old null, new its type, data, box and legend), and each save (`save`, old and new sha256 of the file).
- Deterministic. Saving goes through `deterministic.workbook_bytes` / `presentation_bytes`,
  and the saved file is read back as the document's new state, so the same calls give the
  same bytes on every machine.

The workbook tools are in `booktools`, the deck tools in `decktools`, their JSON schemas in
`toolschemas`. `submit` saves what changed and ends the run; `outputs()` gives the files as
saved, for grading.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from lrc.runtime.artifacts import booktools, decktools, safezip, toolschemas
from lrc.runtime.artifacts.deterministic import presentation_bytes, workbook_bytes
from lrc.runtime.artifacts.runfolder import FolderRefused, RunFolder
from lrc.runtime.artifacts.toolargs import Limits, ToolError, only, string

COMPONENT_ID = "lrc.artifacts.toolbox"
COMPONENT_VERSION = 4

TRUNCATION_MARKER = "…[truncated]"
TERMINAL_TOOLS = ("submit",)
_KINDS = {".xlsx": "xlsx", ".pptx": "pptx"}
_MACRO_SUFFIXES = (".xlsm", ".xltm", ".xlam", ".pptm", ".potm", ".ppsm", ".xlsb")
_MAX_RECORDED_CHARS = 2_000


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer, shaped as the agentic system reads it (like the workloads' ToolOutcome)."""

    content: str
    is_error: bool = False
    terminal: bool = False
    answer: Any = None


@dataclass
class _Doc:
    kind: str
    obj: Any  # openpyxl Workbook or python-pptx Presentation
    package: safezip.Package
    dirty: bool = False
    generation: int = 0  # bumped by every mutation: the key of the computed-values cache
    computed: tuple[int, Any] | None = None


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_RECORDED_CHARS:
        return value[:_MAX_RECORDED_CHARS] + TRUNCATION_MARKER
    return value


class ArtifactToolbox:
    """The tools of one run over a private copy of `files` in `folder`. `call` never raises."""

    def __init__(self, folder: Path, files: Mapping[str, bytes], *, limits: Limits = Limits()):
        self.limits = limits
        self._folder = RunFolder(Path(folder), files, max_file_bytes=limits.max_file_bytes)
        self._docs: dict[str, _Doc] = {}
        self._saved_at: dict[str, int] = {}  # file -> len(mutations) at its last save
        self.mutations: list[dict[str, Any]] = []
        self.submitted: dict[str, Any] | None = None
        self._file = ""
        self._tool = ""
        book, deck = self._on_book, self._on_deck
        self._tools: dict[str, tuple[Callable[[Mapping[str, Any]], str], bool]] = {
            "list_files": (self._list_files, False),
            "list_sheets": (book(booktools.list_sheets), False),
            "read_range": (self._read_range, False),
            "write_cells": (book(booktools.write_cells), True),
            "insert_rows": (book(booktools.insert_rows), True),
            "insert_columns": (book(booktools.insert_columns), True),
            "set_defined_name": (book(booktools.set_defined_name), True),
            "add_sheet": (book(booktools.add_sheet), True),
            "list_slides": (deck(decktools.list_slides), False),
            "read_slide": (deck(decktools.read_slide), False),
            "edit_slide_text": (deck(decktools.edit_slide_text), True),
            "edit_table_cell": (deck(decktools.edit_table_cell), True),
            "set_chart_data": (deck(decktools.set_chart_data), True),
            "add_slide": (deck(decktools.add_slide), True),
            "add_chart": (deck(decktools.add_chart), True),
            "save": (self._save_tool, False),
            "submit": (self._submit, False),
        }

    # -- the interface the agentic system uses ----------------------------------------------
    @staticmethod
    def tools() -> list[dict[str, Any]]:
        """OpenAI tool schemas of every tool, in a fixed order."""
        return toolschemas.schemas()

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        entry = self._tools.get(name) if isinstance(name, str) else None
        if entry is None:
            return _error(f"unknown tool {str(name)[:60]!r}; available: {', '.join(self._tools)}")
        if not isinstance(arguments, Mapping):
            return _error(f"arguments of {name} must be a JSON object")
        if self.submitted is not None:
            return _error("the run was already submitted; no tool runs after submit")
        fn, mutating = entry
        if mutating and len(self.mutations) >= self.limits.max_mutations:
            return _error(f"this run already made {self.limits.max_mutations:,} recorded changes, the limit: save and submit")
        self._tool, self._file = name, ""
        try:
            if name == "submit":
                return self._submit(arguments)
            return ToolOutcome(self._cap(fn(arguments)))
        except (ToolError, FolderRefused) as exc:
            return _error(str(exc))
        except Exception as exc:  # noqa: BLE001 - a tool fault is the run's result, never an exception into it
            if mutating and self._file:
                self._reset(self._file)
                return _error(f"{name} failed ({type(exc).__name__}); unsaved changes to {self._file} were discarded")
            return _error(f"{name} failed ({type(exc).__name__})")

    def outputs(self) -> dict[str, bytes]:
        """Every file of the run as saved in the run folder (what grading reads)."""
        return {name: self._folder.read(name) for name in self._folder.names()}

    # -- recording ------------------------------------------------------------------------------
    def record(self, tool: str, location: str, old: Any, new: Any) -> None:
        """One change of the current file (the tools call this; see the module docstring)."""
        self.mutations.append({"tool": tool, "file": self._file, "location": location, "old": _clip(old), "new": _clip(new)})
        doc = self._docs.get(self._file)
        if doc is not None:
            doc.dirty = True
            doc.generation += 1

    def _reset(self, name: str) -> None:
        self._docs.pop(name, None)
        since = self._saved_at.get(name, 0)
        self.mutations = [m for i, m in enumerate(self.mutations) if m["file"] != name or i < since]

    # -- opening files --------------------------------------------------------------------------
    def _open(self, file: Any, kind: str) -> _Doc:
        name = self._folder.listed(string(file, "file", 256))
        self._file = name
        lowered = name.lower()
        if lowered.endswith(_MACRO_SUFFIXES):
            raise ToolError(f"{name} is a macro-enabled file: refused; macros are never run")
        found = next((k for suffix, k in _KINDS.items() if lowered.endswith(suffix)), None)
        if found != kind:
            raise ToolError(f"{name} is not an {kind} file" + (f" (it is {found}: use the {found} tools)" if found else ""))
        doc = self._docs.get(name)
        if doc is None:
            doc = self._load(name, kind, self._folder.read(name))
            self._docs[name] = doc
        return doc

    @staticmethod
    def _load(name: str, kind: str, data: bytes) -> _Doc:
        package = safezip.inspect(data, kind)  # type: ignore[arg-type]
        if not package.ok:
            raise ToolError(f"{name} refused: {package.reason}")
        opener = safezip.open_workbook if kind == "xlsx" else safezip.open_presentation
        obj, package = opener(data, package)
        if obj is None:
            raise ToolError(f"{name} refused: {package.reason}")
        return _Doc(kind, obj, package)

    def _on_book(self, fn: Callable[..., str]) -> Callable[[Mapping[str, Any]], str]:
        def tool(args: Mapping[str, Any]) -> str:
            only(args, fn.__name__, ("file",), tuple(k for k in args if k != "file"))  # "file" is always required
            return fn(self._open(args["file"], "xlsx").obj, args, self)
        return tool

    def _on_deck(self, fn: Callable[..., str]) -> Callable[[Mapping[str, Any]], str]:
        def tool(args: Mapping[str, Any]) -> str:
            only(args, fn.__name__, ("file",), tuple(k for k in args if k != "file"))
            return fn(self._open(args["file"], "pptx").obj, args, self)
        return tool

    # -- tools of the toolbox itself ------------------------------------------------------------
    def _list_files(self, args: Mapping[str, Any]) -> str:
        only(args, "list_files", ())
        lines = []
        for name in self._folder.names():
            data = self._folder.read(name)
            kind = next((k for suffix, k in _KINDS.items() if name.lower().endswith(suffix)), None)
            doc = self._docs.get(name)
            if kind is None or name.lower().endswith(_MACRO_SUFFIXES):
                status = "refused: not an xlsx or pptx file (macro-enabled files are never opened)"
            else:
                package = doc.package if doc is not None else safezip.inspect(data, kind)  # type: ignore[arg-type]
                status = "ok" if package.ok else f"refused: {package.reason}"
                if package.ok and package.external_links:
                    status += f"; {len(package.external_links)} external link(s), never followed"
            if doc is not None and doc.dirty:
                status += "; changed, not saved yet"
            lines.append(f"{name} ({kind or 'unknown'}, {len(data):,} bytes): {status}")
        return "\n".join(lines) or "no files"

    def _read_range(self, args: Mapping[str, Any]) -> str:
        only(args, "read_range", ("file", "sheet", "range"), ("computed",))
        doc = self._open(args["file"], "xlsx")
        return booktools.read_range(doc.obj, args, self, computed=lambda: self._computed(doc))

    def _computed(self, doc: _Doc):
        from lrc.runtime.artifacts import recalc

        if doc.computed is None or doc.computed[0] != doc.generation:
            doc.computed = (doc.generation, recalc.recalculate(workbook_bytes(doc.obj), doc.obj))
        return doc.computed[1]

    def _save(self, name: str) -> str:
        doc = self._docs.get(name)
        if doc is None or not doc.dirty:
            return f"{name}: unchanged, nothing written"
        self._file = name
        data = workbook_bytes(doc.obj) if doc.kind == "xlsx" else presentation_bytes(doc.obj)
        if len(data) > self.limits.max_file_bytes:
            raise ToolError(f"{name} would be {len(data):,} bytes, over the {self.limits.max_file_bytes:,}-byte limit; not saved")
        before = self._folder.read(name)
        self._folder.write(name, data)
        self.record("save", name, _sha(before), _sha(data))
        self._docs[name] = self._load(name, doc.kind, data)  # what the agent sees next is what is on disk
        self._saved_at[name] = len(self.mutations)
        return f"saved {name} ({len(data):,} bytes, {_sha(data)})"

    def _save_tool(self, args: Mapping[str, Any]) -> str:
        only(args, "save", ("file",))
        name = self._folder.listed(string(args["file"], "file", 256))
        return self._save(name)

    def _submit(self, args: Mapping[str, Any]) -> ToolOutcome:
        only(args, "submit", (), ("note",))
        note = string(args["note"], "note", self.limits.max_text_chars, empty=True) if "note" in args else ""
        lines = [self._save(name) for name in sorted(self._docs)]
        files = {name: _sha(self._folder.read(name)) for name in self._folder.names()}
        self.submitted = {"files": files, "mutations": len(self.mutations), "note": note}
        summary = "; ".join(lines) if lines else "no file was opened"
        return ToolOutcome(self._cap(f"submitted: {summary}"), terminal=True, answer=self.submitted)

    def _cap(self, text: str) -> str:
        if len(text) <= self.limits.max_result_chars:
            return text
        return text[: max(0, self.limits.max_result_chars - len(TRUNCATION_MARKER))] + TRUNCATION_MARKER


def _error(message: str) -> ToolOutcome:
    return ToolOutcome(f"error: {message}", is_error=True)
