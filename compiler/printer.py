"""The one place diagnostics become text: human, JSON (format_version 1) or GitHub annotations."""

from __future__ import annotations

import json
from typing import Iterable, TextIO

from lrc.compiler.diagnostics import Diagnostic

FORMAT_VERSION = 1


def _location(d: Diagnostic) -> str:
    if d.path is None:
        return "lrc"
    if d.line is None:
        return d.path
    return f"{d.path}:{d.line}:{d.column or 1}"


def text(diags: Iterable[Diagnostic]) -> str:
    out: list[str] = []
    for d in diags:
        out.append(f"{_location(d)}: {d.severity}[{d.code}]: {d.summary}")
        if d.pointer is not None:
            out.append(f"  at {d.pointer or '/'}")
        for note in d.notes:
            out.append(f"  note: {note}")
        if d.hint:
            out.append(f"  hint: {d.hint}")
    return "\n".join(out) + ("\n" if out else "")


def as_json(diags: Iterable[Diagnostic], **extra) -> str:
    doc = {"format_version": FORMAT_VERSION, "diagnostics": [d.to_json() for d in diags], **extra}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _gh_escape(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github(diags: Iterable[Diagnostic]) -> str:
    out = []
    for d in diags:
        level = "error" if d.severity == "error" else "warning"
        props = []
        if d.path:
            props.append(f"file={_gh_escape(d.path, True)}")
        if d.line:
            props.append(f"line={d.line}")
        if d.column:
            props.append(f"col={d.column}")
        props.append(f"title={_gh_escape(d.code, True)}")
        message = d.summary + (f" (at {d.pointer or '/'})" if d.pointer is not None else "") + (f" — hint: {d.hint}" if d.hint else "")
        message += "".join(f"\nnote: {note}" for note in d.notes)  # an annotation shows several lines
        out.append(f"::{level} {','.join(props)}::{_gh_escape(message)}")
        for path, line in d.related:  # the same problem where the pull request's diff shows it
            where = f"{d.path}:{d.line}" if d.path and d.line else (d.path or "lrc")
            out.append(f"::{level} file={_gh_escape(path, True)},line={line},title={_gh_escape(d.code, True)}::"
                       + _gh_escape(f"{d.summary} (this line changed; reported at {where})" + (f" — hint: {d.hint}" if d.hint else "")))
    return "\n".join(out) + ("\n" if out else "")


def emit(diags: list[Diagnostic], fmt: str, stream: TextIO, **extra) -> None:
    if fmt == "json":
        stream.write(as_json(diags, **extra))
    elif fmt == "github":
        stream.write(github(diags))
    else:
        stream.write(text(diags))
