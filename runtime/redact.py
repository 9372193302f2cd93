"""Keep secrets out of everything a run writes or prints.

API keys live in the environment. Any environment value of 8 or more characters whose name
says it is a secret (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL) -- 6 or more for a model's key
(`MIN_KEY_LEN`) -- is replaced by
`[REDACTED:<NAME>]` in every journal line, trace and message before it reaches a disk or a
terminal, whatever path it took into the text (an echoed error, a URL, a header dump, a tool
result) and in whatever common form it appears:

- the value itself, and any piece of it of 8 or more characters (a prefix a provider printed
  of a key, or a key cut by a line limit);
- base64, as in an echoed `Authorization: Basic` header: `user:key`, `:key` and `key` put
  the key at any of the three byte alignments, so every alignment is matched (standard and
  URL-safe alphabets), and any 8-character piece of those;
- URL (percent) encoding, and hexadecimal (lower or upper case, pieces of 16 or more hex
  digits: 8-digit pieces of hex would match ordinary digests too often).

A variable a run profile or flag names as a model's key (`api_key_env`) is a secret whatever
its name (`declare_secret_variables`): an operator may keep a key in `LEDGERRATE_OPENAI`.
Variables whose name says they hold a location or a setting rather than a credential
(`*_DIR`, `*_PATH`, `*_FILE`, `*_URL`...) are redacted only where their exact value appears.

`redact(text)` works on text; `redact_value(value, redact)` on every string (and key) of a
JSON-like value, so a redacted record is still valid JSON: redacting the encoded line could
cut an escape sequence in half.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any, Callable
from urllib.parse import quote

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
NOT_A_CREDENTIAL = re.compile(r"_(DIR|PATH|FILE|HOME|CACHE|URL|ENDPOINT|REGION|PROFILE|CONFIG|ID_PREFIX)$", re.IGNORECASE)
MIN_SECRET_LEN = 8
#: A model's key (a variable declared as `api_key_env`, or one named `*_API_KEY`) is redacted from 6
#: characters: a local server's key may be that short (`sk-test`), and such a variable holds a key
#: whatever its value -- unlike `TOKENIZERS_PARALLELISM=false`, which the 8-character floor keeps
#: from turning every `false` in a trace into a mark. Below 8 it is matched whole, never in pieces.
MIN_KEY_LEN = 6
MIN_PIECE = 8  # the shortest piece of a secret (or of an encoding of it) that is redacted
MIN_HEX_PIECE = 16


def _base64_cores(raw: bytes) -> set[str]:
    """The part of base64(prefix + raw + suffix) that depends on `raw` alone, for each of the
    three byte alignments `raw` can have (prefix length mod 3), in both alphabets."""
    cores: set[str] = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode("ascii")
        consumed = (3 - pad) % 3  # key bytes in the first group, shared with the prefix
        start = 4 if pad else 0
        full_groups = (len(raw) - consumed) // 3
        core = encoded[start:start + 4 * full_groups]
        if len(core) >= MIN_PIECE:
            cores.add(core)
            cores.add(core.replace("+", "-").replace("/", "_"))
    return cores


def forms_of(value: str) -> list[tuple[str, int]]:
    """(form, shortest piece of it to redact) for a secret value: the value and its encodings."""
    raw = value.encode("utf-8")
    forms: dict[str, int] = {value: MIN_PIECE, quote(value, safe=""): MIN_PIECE}
    for core in _base64_cores(raw):
        forms.setdefault(core, MIN_PIECE)
    forms[raw.hex()] = MIN_HEX_PIECE
    forms[raw.hex().upper()] = MIN_HEX_PIECE
    return [(f, n) for f, n in forms.items() if len(f) >= n]


class _Secret:
    def __init__(self, name: str, value: str, pieces: bool):
        self.name = name
        self.value = value
        self.pieces = pieces
        self.forms = forms_of(value) if pieces else [(value, len(value))]
        # every piece of the shortest redacted length, to find occurrences with str.find
        self.seeds = [(form, i, form[i:i + n]) for form, n in self.forms for i in range(len(form) - n + 1)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        for form, i, seed in self.seeds:
            pos = text.find(seed)
            while pos != -1:
                start, end, a, b = pos, pos + len(seed), i, i + len(seed)
                while start > 0 and a > 0 and text[start - 1] == form[a - 1]:
                    start, a = start - 1, a - 1
                while end < len(text) and b < len(form) and text[end] == form[b]:
                    end, b = end + 1, b + 1
                found.append((start, end))
                pos = text.find(seed, end)
        return found


class _Screen:
    """Can a text hold a secret? A quick answer for the usual text (a journal line
    of 8-14 KB of prompts and answers), so the exact search below runs only where one may be.

    Why it is exact, never a guess: an occurrence of a seed (a piece the exact search looks for)
    consists only of characters of the secrets' forms, so it lies inside a maximal run of such
    characters at least as long as the shortest seed -- the runs `findall` returns. A run none of
    whose windows is a seed holds none, and such runs are remembered (text repeats them: the same
    words and ids in every prompt). `holds` is False only when no seed occurs in the text; True
    sends the text to the exact search, which decides. Measured on the throughput benchmark's
    journal lines (issue 11 §4): ~1.2 ms per line with the exact search alone, ~0.15 ms screened.
    Secrets matched only whole (`pieces=False`, which may hold spaces) are looked up as they are."""

    _LONG_RUN = 256  # a longer run (a file's base64) goes to the exact search rather than a window loop
    _REMEMBERED = 50_000  # clean runs remembered at most, per redactor (at most ~13 MB of 256-character runs)

    def __init__(self, secrets: list[_Secret]):
        self.whole = [s.value for s in secrets if not s.pieces]
        pieced = [s for s in secrets if s.pieces]
        by_length: dict[int, set[str]] = {}
        chars: set[str] = set()
        for secret in pieced:
            for _form, _i, seed in secret.seeds:
                by_length.setdefault(len(seed), set()).add(seed)
                chars.update(seed)
        self.lengths = sorted(by_length.items())
        self.runs = re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]{%d,}" % self.lengths[0][0]) \
            if self.lengths else None
        self.clean: set[str] = set()

    def holds(self, text: str) -> bool:
        if any(value in text for value in self.whole):
            return True
        if self.runs is None:
            return False
        fresh = set(self.runs.findall(text))
        fresh -= self.clean
        for run in fresh:
            if len(run) > self._LONG_RUN:
                return True
            for n, seeds in self.lengths:
                for j in range(len(run) - n + 1):
                    if run[j:j + n] in seeds:
                        return True
            if len(self.clean) < self._REMEMBERED:
                self.clean.add(run)
        return False


#: Variables declared to hold a credential, whatever their names say (`declare_secret_variables`).
_DECLARED: set[str] = set()


def declare_secret_variables(names: Any) -> None:
    """Treat these environment variables as credentials in every redactor built from now on in
    this process: the key variables (`api_key_env`) of an execute's run profile and flags. Their
    names need not say KEY or TOKEN, and a provider echoing a rejected key must not put it in
    the journal, a trace or a message."""
    _DECLARED.update(n for n in names if isinstance(n, str) and n)


def _is_secret(name: str) -> bool:
    return name in _DECLARED or bool(SECRET_NAME.search(name))


def _is_model_key(name: str) -> bool:
    return name in _DECLARED or name.upper().endswith("_API_KEY")


def build_redactor(environ: dict[str, str] | None = None) -> Callable[[str], str]:
    environ = dict(os.environ if environ is None else environ)
    secrets = [
        _Secret(name, value, pieces=(name in _DECLARED or not NOT_A_CREDENTIAL.search(name))
                and not any(c.isspace() for c in value) and len(value) >= MIN_SECRET_LEN)
        for name, value in sorted(environ.items())
        if _is_secret(name) and len(value) >= (MIN_KEY_LEN if _is_model_key(name) else MIN_SECRET_LEN)
    ]
    screen = _Screen(secrets)

    def redact(text: str) -> str:
        if not secrets or not text or not screen.holds(text):
            return text
        spans: list[tuple[int, int, str]] = []
        for secret in secrets:
            spans.extend((s, e, secret.name) for s, e in secret.spans(text))
        if not spans:
            return text
        spans.sort()
        out: list[str] = []
        cursor = 0
        merged_end = -1
        for start, end, name in spans:
            if start < merged_end:  # overlaps what is already redacted: widen it
                if end > merged_end:
                    merged_end = end
                    cursor = end
                continue
            out.append(text[cursor:start])
            out.append(f"[REDACTED:{name}]")
            cursor = merged_end = end
        out.append(text[cursor:])
        return "".join(out)

    return redact


def redact_value(value: Any, redact: Callable[[str], str]) -> Any:
    """A copy of a JSON-like value with every string and object key redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redact) for v in value]
    return value
