"""Keep secrets out of everything a run writes.

API keys live in the environment. Any environment value whose name says it is a secret
(KEY, TOKEN, SECRET, PASSWORD) is replaced by `[REDACTED:<NAME>]` in every journal line and
trace before it touches the disk, whatever path it took into the text (an echoed error, a
URL, a tool result).
"""

from __future__ import annotations

import os
import re

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
MIN_SECRET_LEN = 8


def build_redactor(environ: dict[str, str] | None = None):
    environ = dict(os.environ if environ is None else environ)
    secrets = sorted(
        ((name, value) for name, value in environ.items() if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LEN),
        key=lambda kv: -len(kv[1]),
    )

    def redact(text: str) -> str:
        for name, value in secrets:
            if value in text:
                text = text.replace(value, f"[REDACTED:{name}]")
        return text

    return redact
