"""Pinned references (`name.vN`) and did-you-mean suggestions."""

from __future__ import annotations

import difflib
import re
from typing import Iterable

REF = re.compile(r"^(?P<id>[a-z0-9][a-z0-9.-]*?)\.v(?P<version>[1-9][0-9]*)$")


def parse_ref(text: str) -> tuple[str, int] | None:
    m = REF.match(text)
    if not m:
        return None
    return m.group("id"), int(m.group("version"))


def make_ref(ident: str, version: int) -> str:
    return f"{ident}.v{version}"


def did_you_mean(word: str, options: Iterable[str]) -> str | None:
    options = sorted(set(options))
    if not options:
        return None
    base = parse_ref(word)
    if base:  # same id, other version: the most likely intent
        same = [o for o in options if (parse_ref(o) or ("", 0))[0] == base[0]]
        if same:
            return max(same, key=lambda o: parse_ref(o)[1])  # type: ignore[index]
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.5)
    return match[0] if match else None
