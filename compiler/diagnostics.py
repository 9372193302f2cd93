"""Diagnostics as values: every stage appends to a list; one printer renders them.

A diagnostic names the file, 1-based line and column, the JSON pointer of the offending
value, a stable code (see codes.py, `lrc explain CODE`), a one-line summary and a hint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    summary: str
    path: str | None = None  # project-relative POSIX path
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    pointer: str | None = None  # JSON pointer into the spec, "" for the whole document
    hint: str | None = None
    notes: tuple[str, ...] = ()
    related: tuple[tuple[str, int], ...] = ()  # (path, line) of other places the problem is at, e.g. a changed prompt line

    def sort_key(self) -> tuple:
        return (self.path or "", self.line or 0, self.column or 0, self.code, self.summary)

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "summary": self.summary,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "hint": self.hint,
            "notes": list(self.notes),
            **({"related": [{"path": path, "line": line} for path, line in self.related]} if self.related else {}),
        }


@dataclass
class Diagnostics:
    """An ordered collection of diagnostics with helpers for the common cases."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def error(self, code: str, summary: str, **kw) -> None:
        self.items.append(Diagnostic(code=code, severity="error", summary=summary, **kw))

    def warning(self, code: str, summary: str, **kw) -> None:
        self.items.append(Diagnostic(code=code, severity="warning", summary=summary, **kw))

    def extend(self, other: "Diagnostics | list[Diagnostic]") -> None:
        self.items.extend(other.items if isinstance(other, Diagnostics) else other)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        # Keep identical diagnostics once (a problem reached by two routes is one problem),
        # with the notes of every route (e.g. each place that uses one broken template).
        unique: dict[tuple, Diagnostic] = {}
        for d in self.items:
            key = (d.sort_key(), d.pointer, d.hint)
            first = unique.get(key)
            if first is None:
                unique[key] = d
            elif any(n not in first.notes for n in d.notes):
                unique[key] = replace(first, notes=first.notes + tuple(n for n in d.notes if n not in first.notes))
        return sorted(unique.values(), key=lambda d: (d.sort_key(), d.pointer or ""))


def escape_pointer_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer_of(parts) -> str:
    return "".join("/" + escape_pointer_token(p) for p in parts)
