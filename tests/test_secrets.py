"""An API key never reaches an output or a terminal, in any common form.

Redaction covers the key itself, any piece of it of 8 or more characters (a prefix, a
suffix, a middle), its base64 at every byte alignment (`key`, `:key`, `user:key` as in an
echoed `Authorization: Basic` header; standard and URL-safe alphabets), its URL encoding and
its hex. Each form is tested on text, on journal records (which must stay valid JSON), and
end to end: the local stub server echoes each form in its error bodies, and the journal, the
traces, every output file and stderr must hold none of them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from unittest import mock
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings, strategies as st

from helpers.project import KEY_ENV, build_project, lrc_env, run_lrc, tree
from helpers.stub_server import Fault, StubServer
from lrc.runtime.journal import Journal
from lrc.runtime.redact import NOT_A_CREDENTIAL, _Screen, _Secret, build_redactor, forms_of, redact_value

KEY = "sk-lrc+test/secret=9f2c7a1e5b3d8c60Qx"
NAME = "LRC_TEST_STUB_KEY"
MARK = f"[REDACTED:{NAME}]"


def b64(text: str, urlsafe: bool = False) -> str:
    raw = text.encode("utf-8")
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode("ascii")


FORMS = {
    "exact": KEY,
    "bearer": f"Bearer {KEY}",
    "prefix-8": KEY[:8],
    "prefix-20": KEY[:20],
    "suffix-10": KEY[-10:],
    "middle-12": KEY[9:21],
    "base64": b64(KEY),
    "base64-urlsafe": b64(KEY, urlsafe=True),
    "basic-user": "Basic " + b64(f"apiuser:{KEY}"),
    "basic-colon": "Basic " + b64(f":{KEY}"),
    "basic-long-user": "Basic " + b64(f"a-much-longer-user-name:{KEY}"),
    "base64-cut": b64(KEY)[:16],
    "url-encoded": quote(KEY, safe=""),
    "hex": KEY.encode().hex(),
    "hex-upper": KEY.encode().hex().upper(),
    "hex-piece": KEY.encode().hex()[10:30],
}


def pieces(form: str, n: int = 8) -> set[str]:
    return {form[i:i + n] for i in range(len(form) - n + 1)}


def leaked(text: str) -> list[str]:
    """Key material left in `text`: any 8-character piece of the key, or 10 of an encoding."""
    found = [p for p in pieces(KEY) if p in text]
    for name in ("base64", "base64-urlsafe", "url-encoded"):
        found += [p for p in pieces(FORMS[name], 10) if p in text]
    found += [p for p in pieces(FORMS["hex"], 16) | pieces(FORMS["hex-upper"], 16) if p in text]
    for user in ("apiuser:", ":", "a-much-longer-user-name:"):
        body = b64(user + KEY)  # the characters after the user's groups encode the key alone
        found += [p for p in pieces(body[(len(user) + 2) // 3 * 4:-4], 10) if p in text]
    return found


@pytest.fixture(scope="module")
def redact():
    return build_redactor({NAME: KEY, "TIKTOKEN_CACHE_DIR": "/home/someone/cache", "PATH": "/usr/bin"})


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_every_form_of_the_key_is_redacted_in_text(redact, form):
    text = f"error 401: the provider said ({form}) and stopped"
    out = redact(text)
    assert MARK in out and not leaked(out), out
    assert out.startswith("error 401: the provider said (") and out.endswith(") and stopped")


@pytest.mark.parametrize("text", [
    KEY[:7], "sk-lrc+", "an ordinary sentence about secrets", "/home/someone/else", "0123456789abcdef" * 4,
])
def test_what_is_not_the_key_is_left_alone(redact, text):
    assert redact(text) == text


def test_a_settings_variable_is_redacted_only_where_its_exact_value_appears(redact):
    assert redact("cache at /home/someone/cache") == "cache at [REDACTED:TIKTOKEN_CACHE_DIR]"
    assert redact("home is /home/someone/") == "home is /home/someone/"


@pytest.mark.parametrize("form", ["exact", "prefix-8", "basic-user", "hex-piece"])
def test_a_journal_record_stays_valid_json_after_redaction(tmp_path, form):
    path = tmp_path / "journal.jsonl"
    tricky = {"type": "call", "run": "r", "step": 1, "msg": f'a\\n"{FORMS[form]}"\n\\', f"key {FORMS[form]}": [FORMS[form]]}
    journal = Journal(path, "sha256:x", "e", redact=build_redactor({NAME: KEY}))
    journal.append(tricky)
    journal.close()
    text = path.read_text(encoding="utf-8")
    assert not leaked(text)
    rec = json.loads(text.splitlines()[1])
    assert MARK in rec["msg"] and any(MARK in k for k in rec)
    assert redact_value(tricky, build_redactor({NAME: KEY}))["msg"] == rec["msg"]


# -- end to end: the stub server echoes each form in its error bodies --------------------------

@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("secrets-project"), stub.api_base, n_per_cell=2)


def _echo(name):
    def echo(auth):
        assert auth == f"Bearer {KEY}", auth  # the key really went over the wire
        return f"{name}: {FORMS[name]}"
    return echo


def test_no_form_of_an_echoed_key_reaches_the_journal_traces_outputs_or_stderr(stub, lock, tmp_path):
    # Each of the first requests fails with a 503 echoing one form; they are retried and the run completes.
    stub.reset(faults=[Fault("status", status=503, requests=[i + 1], echo=_echo(name)) for i, name in enumerate(FORMS)])
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY, LRC_MAX_ATTEMPTS="30"), timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    assert sum(1 for r in stub.snapshot() if r.fault) == len(FORMS)
    files = tree(out)
    journal = files["journal.jsonl"].decode("utf-8")
    assert journal.count(MARK) >= len(FORMS), "the echoed forms did not reach the journal redacted"
    for name, data in files.items():
        assert not leaked(data.decode("utf-8", "replace")), f"key material in {name}"
    assert not leaked(res.stdout + res.stderr)
    report = run_lrc("report", lock, "--out", out, env=lrc_env(KEY), timeout=900)
    assert report.returncode == 0 and not leaked(report.stdout + report.stderr)


#: Every form is redacted in text above; end to end by default two forms, the other three slow.
@pytest.mark.parametrize("name", ["basic-user", "url-encoded", *(pytest.param(n, marks=pytest.mark.slow) for n in ("base64", "prefix-20", "hex"))])
def test_a_rejected_key_echoed_in_any_form_is_not_printed(stub, lock, tmp_path, name):
    stub.reset(faults=[Fault("status", status=401, echo=_echo(name))])
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=900)
    assert res.returncode == 1, res.stderr[-2000:]
    assert "HTTP 401" in res.stderr and "Traceback" not in res.stderr
    assert not leaked(res.stdout + res.stderr), res.stderr
    for fname, data in tree(out).items():
        assert not leaked(data.decode("utf-8", "replace")), f"key material in {fname}"


# -- the screen in front of the exact search (issue 11 §4) -------------------------------------

def _exact_spans(secrets, text: str) -> list:
    return [span for secret in secrets for span in secret.spans(text)]


_SECRET_VALUES = st.sampled_from([KEY, "ghp_" + "aB3" * 12, "p4ss+wörd/ключ=Zz9", "short-but-8", "has a space in it"])
_FILLER = st.one_of(st.sampled_from(["", " ", '"', "\\n"]), st.text(alphabet=st.sampled_from("ab+/=_-%0F9 \n\"\\{}:,кé"), max_size=40))


@st.composite
def _text_with_pieces(draw):
    """Filler with pieces (any length, any offset) of a secret's forms and their neighbours."""
    value = draw(_SECRET_VALUES)
    forms = [form for form, _n in forms_of(value)]
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        parts.append(draw(_FILLER))
        form = draw(st.sampled_from(forms))
        # the shortest pieces redacted (8, 16 of hex), one shorter, the whole form, or any slice
        length = draw(st.one_of(st.sampled_from([7, 8, 15, 16, len(form)]), st.integers(0, len(form))))
        start = draw(st.one_of(st.just(0), st.integers(0, max(0, len(form) - length))))
        parts.append(form[start:start + length])
    parts.append(draw(_FILLER))
    return value, "".join(parts)


@settings(max_examples=400, deadline=None)
@given(_text_with_pieces(), st.sampled_from(["LRC_X_KEY", "LRC_X_CACHE_DIR"]))
@example((KEY, f'"{KEY[:8]}" and {KEY[-8:]}'), "LRC_X_KEY")  # runs of exactly the shortest piece
@example((KEY, "hex " + KEY.encode().hex()[2:18] + "\n"), "LRC_X_KEY")
@example(("has a space in it", "it has a space in it, twice: has a space in it"), "LRC_X_KEY")
def test_the_screen_passes_every_text_the_exact_search_would_redact(case, name):
    """`_Screen.holds` may say True for a clean text, never False for one with a secret's
    piece; and the redactor's output is the exact search's, screened or not."""
    value, text = case
    environ = {name: value, "LRC_OTHER_TOKEN": "sk-another-one-0123456789"}
    secrets = [_Secret(n, v, pieces=not NOT_A_CREDENTIAL.search(n) and not any(c.isspace() for c in v))
               for n, v in sorted(environ.items())]
    screen = _Screen(secrets)
    for probe in (text, text * 2, text + "x" * 300 + text):  # the second pass reads remembered runs
        if _exact_spans(secrets, probe):
            assert screen.holds(probe), probe
    redact = build_redactor(environ)
    with mock.patch.object(_Screen, "holds", lambda self, text: True):  # the exact search alone
        expected = build_redactor(environ)(text)
    assert redact(text) == expected
    assert redact(text) == expected  # again, once its runs are remembered


def test_a_long_run_of_secret_characters_goes_to_the_exact_search():
    """A file's base64 in a message is one long run: screened, it still has every key piece cut."""
    filler = base64.b64encode(bytes(range(256)) * 4).decode("ascii")
    redact = build_redactor({NAME: KEY})
    for form in (KEY, FORMS["base64"], FORMS["hex"]):
        out = redact(filler + form + filler)
        assert MARK in out and not leaked(out)


# -- short keys: a local server's key may be 6 or 7 characters -----------------------------------

def test_a_models_short_key_is_redacted_whole_and_a_short_setting_is_left_alone():
    """The 8-character floor let `OPENAI_API_KEY=sk-test` through every trace (a provider echoing a
    rejected key printed it). A model's key -- a variable named `*_API_KEY`, or one a run profile or
    flag declares as `api_key_env` -- is redacted from 6 characters, whole (its pieces would be
    ordinary words); other short values whose names merely say KEY or TOKEN are left alone, or
    `TOKENIZERS_PARALLELISM=false` would turn every `false` into a mark."""
    from lrc.runtime import redact as redaction

    redact = build_redactor({"OPENAI_API_KEY": "sk-test", "TOKENIZERS_PARALLELISM": "false", "ANTHROPIC_API_KEY": "abcde",
                             "SOME_KEY": "k3y-77"})
    assert redact("Incorrect API key provided: sk-test.") == "Incorrect API key provided: [REDACTED:OPENAI_API_KEY]."
    assert redact('{"valid": false, "k": "abcde", "x": "k3y-77"}') == '{"valid": false, "k": "abcde", "x": "k3y-77"}'
    assert redact("sk-tes and est") == "sk-tes and est"  # never in pieces below 8 characters
    saved = set(redaction._DECLARED)
    try:
        redaction.declare_secret_variables(["LEDGER_ENDPOINT_SECRET_VAR"])
        assert build_redactor({"LEDGER_ENDPOINT_SECRET_VAR": "q9Zx12"})("key q9Zx12 refused") == \
            "key [REDACTED:LEDGER_ENDPOINT_SECRET_VAR] refused"
    finally:
        redaction._DECLARED.clear()
        redaction._DECLARED.update(saved)


def test_a_rejected_short_key_echoed_by_the_provider_is_not_printed_nor_journaled(stub, lock, tmp_path):
    short = "sk-tst7"
    stub.reset(faults=[Fault("status", status=401, echo=lambda auth: f"Incorrect API key provided: {auth}")])
    out = tmp_path / "out"
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(short), timeout=900)
    assert res.returncode == 1, res.stderr[-2000:]
    assert "HTTP 401" in res.stderr and "[REDACTED:" in res.stdout + res.stderr
    assert short not in res.stdout + res.stderr
    for fname, data in tree(out).items():
        assert short not in data.decode("utf-8", "replace"), f"the key in {fname}"
