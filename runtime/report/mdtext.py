"""Untrusted text (a model's reply, a sheet name it chose, a validator message quoting its
files) as inert Markdown: one line, no markup, no HTML, no terminal control.

Why: `reliability-report.md` quotes the model's last reply and the failing check of each
important failure. Pasted raw, a reply could forge a heading and a results row ("## Results
per system and task" with a made-up 100%), carry `<script>`, an `<img onerror>`, a
`javascript:` link or a remote image (rendered by whatever views the file), or terminal
escape sequences (`ESC ]0;…BEL`, `ESC [2J`) that act when someone `cat`s it — all found on
2026-12-07. What a reader needs is the text; what it must never do is act.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional
# overrides and isolates (text that reads differently from what it is).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]+")
# Markdown's punctuation that can make markup in the middle of a line (GFM: emphasis, code,
# links and images, table cells, strikethrough) and the backslash. Block markup (headings,
# lists, quotes) needs a line of its own, which a line break turned into a space never starts.
_MARKUP = re.compile(r"([\\`*_\[\]|~#])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def inline(text: object, limit: int | None = None) -> str:
    """`text` as one inert line of Markdown: controls and line breaks become one space, HTML's
    specials become entities, Markdown's punctuation is escaped; cut to `limit` characters of
    the original first (never in the middle of an escape)."""
    plain = "" if text is None else str(text)
    if limit is not None and len(plain) > limit:
        plain = plain[:limit] + "…"
    plain = _CONTROL.sub(" ", plain).strip()
    plain = "".join(_HTML.get(ch, ch) for ch in plain)
    return _MARKUP.sub(r"\\\1", plain)
