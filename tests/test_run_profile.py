"""Run profiles and operating flags: how an execute is operated, never what it measures.

- A profile is checked like a spec (file:line:col, JSON pointer, code, hint; exit 1, nothing
  run); so are the flags (`--max-concurrency MODEL=N`, `--api-base`, `--api-key-env`).
- Precedence per setting: flag > profile > LRC_* variable > default, with the source recorded.
- The effective settings are journaled once per execute and written into every run manifest
  and summary.json (`operation`), with a key variable's NAME only, never a key.
- Operating settings are not part of an edition (LRC2010), and the 2026-12 edition compiles
  without them; its example profile matches its lock.
- An endpoint nothing listens at stops its model after a short streak of connection failures:
  seconds, one message, exit 3, and a rerun resumes once a server is there.
"""

from __future__ import annotations

import json
import resource
import shutil
import socket
import time
from pathlib import Path

import pytest

from helpers.project import KEY_ENV, REPO, STUB_MODEL, build_project, journal_records, lrc_env, read_cells, run_lrc, tree
from helpers.stub_server import StubServer

from lrc.runtime.operate import OptionsError, from_request

DEMO_LOCK = REPO / "generated" / "demo" / "plan.lock"
KEY = "sk-lrc-profile-test-9f8e7d6c5b4a"  # a fake key: it must never appear in any output file
N = 3


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def refused(res, out: Path) -> None:
    """Exit 1, no traceback, nothing run (the output folder was not even created)."""
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    assert "nothing was run" in res.stderr
    assert not out.exists()


# -- a profile or a flag that cannot be used --------------------------------------------------

BAD_PROFILES = {
    # name: (profile text, code, line, column, pointer, text in the message)
    "unknown-key": ("kind: run-profile\nmax_attempt: 3\n", "LRC2003", 2, 1, "/max_attempt", "did you mean 'max_attempts'?"),
    "wrong-type": ("kind: run-profile\nmodels:\n  lrc/oracle:\n    max_concurrency: \"8\"\n", "LRC2001", 4, 22,
                   "/models/lrc~1oracle/max_concurrency", "expected integer"),
    "out-of-range": ("kind: run-profile\nmax_attempts: 0\n", "LRC2009", 2, 15, "/max_attempts", "minimum"),
    "unknown-model": ("kind: run-profile\nmodels:\n  lrc/oracel:\n    max_concurrency: 2\n", "LRC8311", 3, 3,
                      "/models/lrc~1oracel", "did you mean lrc/oracle?"),
    "unknown-model-setting": ("kind: run-profile\nmodels:\n  lrc/null:\n    temperature: 0\n", "LRC2003", 4, 5,
                              "/models/lrc~1null/temperature", "temperature"),
    "not-a-profile": ("kind: edition\nid: demo\n", "LRC2004", 1, 7, "/kind", "run-profile"),
    "duplicate-key": ("kind: run-profile\nmax_attempts: 3\nmax_attempts: 4\n", "LRC1002", 3, 1, None, "duplicate"),
    "alias": ("kind: run-profile\nmax_attempts: &n 3\nstop_after_timeouts: *n\n", "LRC1004", 2, 15, None, "anchor"),
    "bad-url": ("kind: run-profile\nmodels:\n  lrc/null:\n    api_base: ftp://x\n", "LRC2005", 4, 15,
                "/models/lrc~1null/api_base", "does not match"),
}


@pytest.mark.parametrize("case", sorted(BAD_PROFILES))
def test_a_bad_profile_reads_like_a_spec_error_and_runs_nothing(tmp_path, case):
    text, code, line, col, pointer, words = BAD_PROFILES[case]
    profile = write(tmp_path / "run.yaml", text)
    out = tmp_path / "out"
    res = run_lrc("execute", DEMO_LOCK, "--out", out, "--profile", profile, cwd=tmp_path)
    refused(res, out)
    assert f"run.yaml:{line}:{col}: error[{code}]" in res.stderr, res.stderr
    if pointer is not None:
        assert f"  at {pointer}" in res.stderr
    assert words in res.stderr


def test_a_missing_profile_is_named(tmp_path):
    out = tmp_path / "out"
    res = run_lrc("execute", DEMO_LOCK, "--out", out, "--profile", tmp_path / "run.yml", cwd=tmp_path)
    refused(res, out)
    assert "run.yml: error[LRC8313]: cannot read the run profile" in res.stderr


BAD_FLAGS = {
    "not-a-pair": (["--max-concurrency", "8"], "LRC8312", "is not MODEL=VALUE"),
    "not-a-number": (["--max-concurrency", "lrc/oracle=lots"], "LRC8312", 'expected integer, found "lots"'),
    "zero": (["--max-concurrency", "lrc/oracle=0"], "LRC8312", "less than the minimum of 1"),
    "bad-url": (["--api-base", "lrc/null=127.0.0.1:8000"], "LRC8312", "does not match"),
    "unknown-model": (["--api-base", "openai/gpt-4.1=http://127.0.0.1:1/v1"], "LRC8311", "the plan does not run model 'openai/gpt-4.1'"),
    "typo-model": (["--max-concurrency", "lrc/baselin=2"], "LRC8311", "did you mean lrc/baseline?"),
}


@pytest.mark.parametrize("case", sorted(BAD_FLAGS))
def test_a_bad_flag_is_refused_with_its_code_and_runs_nothing(tmp_path, case):
    flags, code, words = BAD_FLAGS[case]
    out = tmp_path / "out"
    res = run_lrc("execute", DEMO_LOCK, "--out", out, *flags, cwd=tmp_path)
    refused(res, out)
    assert f"lrc: error[{code}]: {flags[0]}" in res.stderr, res.stderr
    assert words in res.stderr


@pytest.mark.parametrize("where", ["profile", "flag"])
def test_a_key_given_where_its_variable_name_belongs_is_never_echoed(tmp_path, where):
    out = tmp_path / "out"
    if where == "profile":
        profile = write(tmp_path / "run.yaml", f"kind: run-profile\nmodels:\n  lrc/null:\n    api_key_env: {KEY}\n")
        res = run_lrc("execute", DEMO_LOCK, "--out", out, "--profile", profile, cwd=tmp_path)
        assert "run.yaml:4:18: error[LRC2005]" in res.stderr
    else:
        res = run_lrc("execute", DEMO_LOCK, "--out", out, "--api-key-env", f"lrc/null={KEY}", cwd=tmp_path)
        assert "error[LRC8312]" in res.stderr
    refused(res, out)
    assert KEY not in res.stderr + res.stdout
    assert "not an environment variable NAME" in res.stderr


CREDENTIAL_URLS = {"user-and-password": "https://me:{key}@proxy.example/v1", "user-only": "https://{key}@proxy.example/v1",
                   "query": "https://proxy.example/v1?api-key={key}", "fragment": "https://proxy.example/v1#{key}",
                   "query-without-path": "https://proxy.example?key={key}"}


#: The forms each run through `lrc execute` by default; the others run there with the slow marker
#: (every form is checked in-process below either way).
_DEFAULT_FORMS = ("user-and-password", "query")


@pytest.mark.parametrize("where", ["profile", "flag"])
@pytest.mark.parametrize("form", [f if f in _DEFAULT_FORMS else pytest.param(f, marks=pytest.mark.slow)
                                  for f in sorted(CREDENTIAL_URLS)])
def test_an_api_base_that_could_carry_a_key_is_refused_and_never_echoed(tmp_path, where, form):
    """An endpoint is recorded in every run manifest and summary.json, so a URL with a user,
    password, query or fragment (where a key can hide) is refused before anything runs, and the
    message does not print it."""
    url = CREDENTIAL_URLS[form].format(key=KEY)
    out = tmp_path / "out"
    if where == "profile":
        profile = write(tmp_path / "run.yaml", f"kind: run-profile\nmodels:\n  lrc/null:\n    api_base: {url}\n")
        res = run_lrc("execute", DEMO_LOCK, "--out", out, "--profile", profile, cwd=tmp_path)
        assert "run.yaml:4:15: error[LRC2005]" in res.stderr, res.stderr
        assert "  at /models/lrc~1null/api_base" in res.stderr
    else:
        res = run_lrc("execute", DEMO_LOCK, "--out", out, "--api-base", f"lrc/null={url}", cwd=tmp_path)
        assert "error[LRC8312]: --api-base lrc/null=<value not shown>" in res.stderr, res.stderr
    refused(res, out)
    assert KEY not in res.stderr + res.stdout
    assert "may hold no user, password, query or fragment" in res.stderr


@pytest.mark.parametrize("form", sorted(CREDENTIAL_URLS))
def test_the_runtime_refuses_such_an_api_base_whoever_built_the_request(form):
    """The schema's pattern and the runtime's check agree; the runtime's message holds no URL."""
    import re

    url = CREDENTIAL_URLS[form].format(key=KEY)
    schema = json.loads((REPO / "schemas" / "run-profile.schema.json").read_text())
    assert not re.search(schema["$defs"]["model"]["properties"]["api_base"]["pattern"], url)
    with pytest.raises(OptionsError) as info:
        from_request({"endpoint_flags": {"api_base": {"m/a": url}}}, env={})
    assert KEY not in str(info.value) and "may hold no user, password, query or fragment" in str(info.value)


def test_a_refused_api_base_is_not_shown_even_when_it_quotes_the_diagnostics_own_words(tmp_path):
    """The value is everything before the pattern in the diagnostic, whatever words it holds."""
    from lrc.compiler import profile
    from lrc.compiler.diagnostics import Diagnostics

    path = write(tmp_path / "run.yaml", f'kind: run-profile\nmodels:\n  lrc/null:\n    api_base: "https://h/v1 does not match x@{KEY}"\n')
    diags = Diagnostics()
    assert profile.check(path, "run.yaml", {}, EMBEDDED, diags, embedded=EMBEDDED) is None
    assert [d.code for d in diags.items] == ["LRC2005"]
    assert KEY not in repr(diags.items) and "may hold no user, password, query or fragment" in diags.items[0].summary


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com", "https://h.example/v1/",
                                 "http://h:80", "https://h.example/openai/deployments/a@b/v1"])
def test_a_plain_endpoint_is_accepted_by_schema_and_runtime_alike(url):
    import re

    from lrc.runtime.operate import plain_endpoint

    schema = json.loads((REPO / "schemas" / "run-profile.schema.json").read_text())
    assert re.search(schema["$defs"]["model"]["properties"]["api_base"]["pattern"], url)
    assert plain_endpoint(url)
    assert from_request({"endpoint_flags": {"api_base": {"m/a": url}}}, env={}).endpoint("m/a").api_base == url


# -- an endpoint for an embedded model: a warning, and the execute runs -----------------------

EMBEDDED = ["lrc/judge", "lrc/null", "lrc/oracle"]


def test_an_endpoint_or_key_variable_for_an_embedded_model_warns_where_it_is_set(tmp_path):
    """Flag or profile, either setting: LRC8314, a warning (the request is still usable), at the
    profile's line, column and pointer; a concurrency, and any setting of a real model, never warn."""
    from lrc.compiler import profile
    from lrc.compiler.diagnostics import Diagnostics

    path = write(tmp_path / "run.yaml", (
        "kind: run-profile\nmodels:\n  lrc/null:\n    max_concurrency: 2\n    api_base: http://127.0.0.1:9/v1\n"
        "    api_key_env: NULL_KEY\n  openai/gpt-4.1:\n    api_base: http://127.0.0.1:8/v1\n    api_key_env: REAL_KEY\n"))
    flags = {"--api-base": ["lrc/oracle=http://127.0.0.1:9/v1", "openai/gpt-4.1=http://127.0.0.1:7/v1"],
             "--api-key-env": ["lrc/judge=JUDGE_KEY", "openai/gpt-4.1=OTHER_KEY"], "--max-concurrency": ["lrc/oracle=3"]}
    diags = Diagnostics()
    checked = profile.check(path, "run.yaml", flags, [*EMBEDDED, "openai/gpt-4.1"], diags, embedded=EMBEDDED)
    assert checked is not None, [str(d) for d in diags.items]
    assert checked["flags"]["api_base"]["lrc/oracle"] == "http://127.0.0.1:9/v1"  # kept as given
    got = {(d.code, d.severity, d.line, d.column, d.pointer, d.summary.split(" has no effect")[0]) for d in diags.items}
    assert got == {
        ("LRC8314", "warning", None, None, None, "--api-base lrc/oracle=..."),
        ("LRC8314", "warning", None, None, None, "--api-key-env lrc/judge=..."),
        ("LRC8314", "warning", 5, 5, "/models/lrc~1null/api_base", "its api_base"),
        ("LRC8314", "warning", 6, 5, "/models/lrc~1null/api_key_env", "its api_key_env"),
    }
    assert all("embedded reference model" in d.summary and "max_concurrency still applies" in d.hint for d in diags.items)
    # Without the embedded set (a caller that cannot tell) nothing warns; an error still wins.
    quiet = Diagnostics()
    assert profile.check(path, "run.yaml", flags, [*EMBEDDED, "openai/gpt-4.1"], quiet) is not None
    assert quiet.items == []
    bad = Diagnostics()
    assert profile.check(None, None, {"--api-base": ["lrc/null=ftp://x"]}, EMBEDDED, bad, embedded=EMBEDDED) is None
    assert [d.code for d in bad.items] == ["LRC8312"]


def test_an_api_base_for_an_embedded_model_warns_and_the_execute_runs(tmp_path):
    out = tmp_path / "out"
    res = run_lrc("execute", DEMO_LOCK, "--out", out, "--no-progress", "--models", "lrc/oracle", "--workloads",
                  "triage.ap-inbox", "--limit", "1", "--api-base", "lrc/oracle=http://127.0.0.1:9/v1", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "warning[LRC8314]: --api-base lrc/oracle=... has no effect: lrc/oracle is an embedded reference model" in res.stderr
    assert res.stderr.count("LRC8314") == 1
    op = [r for r in journal_records(out) if r["type"] == "session"][0]["operation"]
    assert op["models"]["lrc/oracle"]["api_base"] == {"value": "http://127.0.0.1:9/v1", "source": "flag"}
    runs = [r for r in journal_records(out) if r["type"] == "run"]
    assert runs and all(r["model"] == "lrc/oracle" for r in runs)


def test_estimate_checks_its_profile_as_execute_does_and_a_good_one_changes_no_figure(tmp_path):
    bad = write(tmp_path / "run.yaml", "kind: run-profile\nmax_attempt: 3\n")
    res = run_lrc("estimate", DEMO_LOCK, "--profile", bad, cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "run.yaml:2:1: error[LRC2003]" in res.stderr and "did you mean 'max_attempts'?" in res.stderr
    assert "lrc estimate: 1 problem(s) in the operating settings; nothing was estimated." in res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr
    missing = run_lrc("estimate", DEMO_LOCK, "--profile", tmp_path / "run.yml", cwd=tmp_path)
    assert missing.returncode == 1 and "run.yml: error[LRC8313]: cannot read the run profile" in missing.stderr
    good = write(tmp_path / "ok.yaml", "kind: run-profile\nmodels:\n  lrc/null:\n    max_concurrency: 2\n"
                                       "    api_base: http://127.0.0.1:9/v1\nmax_attempts: 3\n")
    plain = run_lrc("estimate", DEMO_LOCK, "--format", "json", cwd=tmp_path)
    profiled = run_lrc("estimate", DEMO_LOCK, "--format", "json", "--profile", good, cwd=tmp_path)
    assert plain.returncode == profiled.returncode == 0, profiled.stderr
    assert profiled.stdout == plain.stdout  # operating settings change no forecast figure
    assert "ok.yaml:5:5: warning[LRC8314]" in profiled.stderr and "LRC8314" not in plain.stderr


# -- precedence and sources ------------------------------------------------------------------

def test_precedence_flag_over_profile_over_environment_over_default():
    from lrc.runtime.operate import OptionsError, from_request

    env = {"LRC_MAX_ATTEMPTS": "5", "LRC_RETRY_BASE_SECONDS": "0.5", "LRC_STOP_AFTER_CONNECTION_FAILURES": "3"}
    profile = {"kind": "run-profile", "max_attempts": 2, "stop_after_timeouts": 9,
               "models": {"m/a": {"max_concurrency": 16, "api_base": "http://profile/v1"}, "m/b": {"api_key_env": "B_KEY"}}}
    flags = {"max_concurrency": {"m/a": 32}, "api_key_env": {"m/a": "A_KEY"}}
    options = from_request({"profile": profile, "profile_path": "run.yaml", "endpoint_flags": flags}, env=env)
    op = options.operation(["m/a", "m/b", "m/c"])
    settings = op["settings"]
    assert settings["max_attempts"] == {"value": 2, "source": "profile"}  # profile over env
    assert settings["retry_base_seconds"] == {"value": "0.5", "source": "env"}  # env over default
    assert settings["stop_after_connection_failures"] == {"value": 3, "source": "env"}
    assert settings["stop_after_timeouts"] == {"value": 9, "source": "profile"}
    assert settings["retry_max_seconds"] == {"value": "60", "source": "default"}
    a, b, c = op["models"]["m/a"], op["models"]["m/b"], op["models"]["m/c"]
    assert a["max_concurrency"] == {"value": 32, "source": "flag"}  # flag over profile
    assert a["api_base"] == {"value": "http://profile/v1", "source": "profile"}
    assert a["api_key_env"] == {"value": "A_KEY", "source": "flag"}
    assert b["api_key_env"] == {"value": "B_KEY", "source": "profile"} and b["max_concurrency"]["source"] == "default"
    assert c == {"api_base": {"value": None, "source": "default"}, "api_key_env": {"value": None, "source": "default"},
                 "max_concurrency": {"value": 4, "source": "default"}}
    assert op["profile"] == "run.yaml"
    assert options.settings.max_attempts == 2 and options.endpoint("m/a").max_concurrency == 32
    assert options.unknown_models(["m/a"]) == ["m/b"]
    # The runtime checks again what it is given (it trusts no caller).
    for bad in ({"profile": {"max_attempts": 0}}, {"endpoint_flags": {"max_concurrency": {"m/a": 0}}},
                {"endpoint_flags": {"api_key_env": {"m/a": KEY}}}, {"profile": {"models": {"m/a": {"api_base": "file:///etc"}}}}):
        with pytest.raises(OptionsError) as info:
            from_request(bad, env={})
        assert KEY not in str(info.value)
    with pytest.raises(OptionsError):
        from_request({}, env={"LRC_STOP_AFTER_CONNECTION_FAILURES": "0"})


# -- the operating record: journal, manifests, summary.json -----------------------------------

@pytest.fixture(scope="module")
def lock(stub: StubServer, tmp_path_factory) -> Path:
    return build_project(tmp_path_factory.mktemp("profile-project"), stub.api_base, n_per_cell=N)


def test_effective_settings_are_recorded_everywhere_and_no_key_ever(stub, lock, tmp_path):
    stub.reset()
    profile = write(tmp_path / "ops.yaml", (
        "kind: run-profile\n"
        f"models:\n  {STUB_MODEL}:\n    api_base: {stub.api_base}\n    max_concurrency: 2\n"
        "max_attempts: 4\nretry_base_seconds: 0.01\n"))
    out = tmp_path / "out"
    env = lrc_env(KEY, LRC_MAX_ATTEMPTS="6", LRC_RUN_DEADLINE_SECONDS="600")
    res = run_lrc("execute", lock, "--out", out, "--no-progress", "--profile", profile,
                  "--api-key-env", f"{STUB_MODEL}={KEY_ENV}", "--max-concurrency", f"lrc/baseline=3", env=env)
    assert res.returncode == 0, res.stderr
    assert "LRC8314" not in res.stderr  # a real model's endpoint, an embedded model's concurrency: no warning
    sessions = [r for r in journal_records(out) if r["type"] == "session"]
    assert len(sessions) == 1
    op = sessions[0]["operation"]
    assert op["settings"]["max_attempts"] == {"value": 4, "source": "profile"}
    assert op["settings"]["run_deadline_seconds"] == {"value": "600", "source": "env"}
    assert op["settings"]["retry_base_seconds"] == {"value": "0.01", "source": "profile"}  # the test env's 0.01 is overridden
    assert op["settings"]["stop_after_connection_failures"] == {"value": 8, "source": "default"}
    stub_ops = op["models"][STUB_MODEL]
    assert stub_ops["api_key_env"] == {"value": KEY_ENV, "source": "flag"}
    assert stub_ops["api_base"] == {"value": stub.api_base, "source": "profile"}
    assert stub_ops["max_concurrency"] == {"value": 2, "source": "profile"}
    assert op["models"]["lrc/baseline"]["max_concurrency"] == {"value": 3, "source": "flag"}
    assert op["profile"] == str(profile)
    # Every run manifest carries the settings of the execute that made it; summary.json lists them.
    manifests = tree(out / "runs", "manifest.json")
    assert len(manifests) == 2 * 2 * N
    assert all(json.loads(m)["operation"] == op for m in manifests.values())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["operation"]["sessions"] == [{"settings": op, "runs": 2 * 2 * N}]
    assert summary["operation"]["runs_without_record"] == 0
    # The key's NAME is recorded, the key never: not in any file of the folder.
    assert KEY_ENV in (out / "summary.json").read_text()
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    # A second execute with nothing to do journals nothing; another with other settings that
    # resumes nothing adds nothing either (no run was made under it).
    again = run_lrc("execute", lock, "--out", out, "--no-progress", "--max-concurrency", f"{STUB_MODEL}=7", env=lrc_env(KEY))
    assert again.returncode == 0, again.stderr
    assert [r for r in journal_records(out) if r["type"] == "session"] == sessions
    assert json.loads((out / "summary.json").read_text()) == summary


def test_the_operating_record_stays_apart_from_the_results(stub, lock, tmp_path):
    """Two executes of one plan with different operating settings: identical results once the
    `operation` keys are set aside."""
    outs = []
    for n, (flags, env) in enumerate([([], {}), (["--max-concurrency", f"{STUB_MODEL}=1"], {"LRC_MAX_ATTEMPTS": "2"})]):
        stub.reset()
        out = tmp_path / f"out{n}"
        res = run_lrc("execute", lock, "--out", out, "--no-progress", *flags, env=lrc_env(KEY, **env))
        assert res.returncode == 0, res.stderr
        outs.append(out)

    def without_operation(out: Path) -> dict[str, object]:
        files = {}
        for name, data in tree(out).items():
            if name == "journal.jsonl" or name.endswith(".lock") or name.endswith(".parquet") or name == ".lrc-outputs.json":
                continue  # history and bookkeeping (the journal; the up-to-date stamp holds its size and inode), not outputs
            if name.endswith(".json"):
                doc = json.loads(data)
                if isinstance(doc, dict):
                    doc.pop("operation", None)
                files[name] = doc
            else:
                files[name] = data
        return files

    a, b = (json.loads((o / "summary.json").read_text())["operation"] for o in outs)
    assert a != b
    assert without_operation(outs[0]) == without_operation(outs[1])
    assert read_cells(outs[0]) == read_cells(outs[1])


# -- operating settings are not part of an edition --------------------------------------------

@pytest.mark.parametrize("key, value", [("max_concurrency", "8"), ("api_base", "http://127.0.0.1:8000/v1"),
                                        ("api_key_env", "OPENAI_API_KEY")])
def test_an_edition_with_an_operating_setting_gets_LRC2010_with_the_profile_equivalent(project_copy, key, value):
    edition = project_copy / "specs" / "editions" / "2026-12.yaml"
    text = edition.read_text(encoding="utf-8")
    anchor = "  - id: openai/gpt-4.1-mini\n    role: candidate\n"
    assert anchor in text
    edition.write_text(text.replace(anchor, anchor + f"    {key}: {value}\n"), encoding="utf-8")
    line = text[: text.index(anchor)].count("\n") + 3
    res = run_lrc("compile", "--project", str(project_copy))
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"specs/editions/2026-12.yaml:{line}:5: error[LRC2010]: '{key}' is an operating setting" in res.stderr
    assert f"at /models/1/{key}" in res.stderr
    shown = value if key == "max_concurrency" else json.dumps(value)
    assert f'`models: {{"openai/gpt-4.1-mini": {{{key}: {shown}}}}}`' in res.stderr
    assert f"--{key.replace('_', '-')} openai/gpt-4.1-mini={value}" in res.stderr
    assert "LRC2003" not in res.stderr  # not a generic "unknown field"
    explain = run_lrc("explain", "LRC2010")
    assert explain.returncode == 0 and "run profile" in explain.stdout


def test_the_2026_12_edition_compiles_without_operating_settings_and_its_profile_matches_its_lock(tmp_path):
    from lrc.compiler import profile as profiles
    from lrc.compiler.diagnostics import Diagnostics
    from lrc.runtime.lock import format as lockformat

    check = run_lrc("compile", "--check")
    assert check.returncode == 0, check.stderr
    lock = lockformat.loads((REPO / "generated" / "2026-12" / "plan.lock").read_bytes())
    for entry in [*lock["plan"]["models"].values(), *lock["plan"]["edition"]["spec"]["models"]]:
        assert not {"api_base", "api_key_env", "max_concurrency"} & set(entry), entry
    demo = lockformat.loads(DEMO_LOCK.read_bytes())
    for entry in demo["plan"]["models"].values():
        assert "max_concurrency" not in entry
    diags = Diagnostics()
    checked = profiles.check(REPO / "docs" / "profiles" / "2026-12.yaml", "docs/profiles/2026-12.yaml", {},
                             sorted(lock["plan"]["models"]), diags)
    assert checked is not None and not diags.items, [str(d) for d in diags.items]
    assert sorted(checked["profile"]["models"]) == sorted(lock["plan"]["models"])
    assert {m: e["max_concurrency"] for m, e in checked["profile"]["models"].items()} == {
        "openai/gpt-4.1": 4, "openai/gpt-4.1-mini": 8, "anthropic/claude-sonnet-4-5": 4, "anthropic/claude-haiku-4-5": 8}


# -- an endpoint nothing listens at -------------------------------------------------------------

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> tuple[Path, int]:
    """A project whose stub model runs 2 x 60 runs, meant for an endpoint that is not there."""
    port = closed_port()
    lock = build_project(tmp_path_factory.mktemp("unreachable-project"), f"http://127.0.0.1:{port}/v1", n_per_cell=60,
                         max_concurrency=16, reference_models=())
    return lock, port


def test_an_unreachable_endpoint_stops_its_model_in_seconds_and_a_rerun_resumes(many, tmp_path):
    lock, port = many
    out = tmp_path / "out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    # Default retry settings (the test environment's fast backoff dropped): the stop, not a
    # short backoff, is what keeps this in seconds.
    env = {k: v for k, v in lrc_env(KEY).items() if not k.startswith("LRC_RETRY")}
    res = run_lrc("execute", lock, "--out", out, "--no-progress", env=env, timeout=300)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    endpoint = f"http://127.0.0.1:{port}/v1"
    stops = [line for line in res.stderr.splitlines() if "was stopped" in line or "stopped " in line]
    assert len(stops) == 1, res.stderr
    assert f"{STUB_MODEL} ({endpoint}) was stopped" in stops[0] and "failed to connect" in stops[0]
    assert "Connect call failed" in stops[0] or "refused" in stops[0].lower()
    records = journal_records(out)
    excluded = [r for r in records if r["type"] == "infra_exhausted"]
    assert len(excluded) == 120 and not [r for r in records if r["type"] in ("run", "call")]
    attempts = sum(len(r["failures"]) for r in excluded)
    # The default streak (8) plus what was in flight (16): not 8 attempts of each of 120 runs.
    assert attempts <= 8 + 16, attempts
    # Mostly start-up (imports, items) on a loaded machine; before the stop the retries alone
    # took minutes (1,050 runs: 8 min 42 s).
    assert wall < 120, wall
    print(f"unreachable: 120 runs, {attempts} attempts, wall {wall:.1f}s, "
          f"CPU {after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime:.1f}s")
    # A server appears at that endpoint: the same command resumes and completes.
    with StubServer(port=port) as server:
        again = run_lrc("execute", lock, "--out", out, "--no-progress", env=lrc_env(KEY), timeout=600)
        assert again.returncode == 0, again.stderr
        assert server.count >= 120  # every excluded run made now (none was finished before)
    assert json.loads((out / "summary.json").read_text())["runs_incomplete"] == 0
    assert sum(int(row["n"]) for row in read_cells(out).values()) == 120
