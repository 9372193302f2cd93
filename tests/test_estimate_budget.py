"""`lrc estimate` and `lrc execute --budget USD` on a throw-away project with non-zero prices.

The project is a copy of the repository's specs with extra editions whose embedded reference
models carry real (non-zero) prices, so every figure is checked in dollars:

- `priced`: lrc/oracle and lrc/baseline, input and output priced, max_tokens declared;
- `inputonly`: the same models with a zero output price (a call's worst case is then exactly
  its cost, so a budget can fit a run to the last digit);
- `unbounded`: an output price but no max_tokens (a budget cannot be kept: refused);
- `real`: real provider models behind an unreachable endpoint, for the offline counter
  (never executed).

The estimate is checked against figures computed here by hand from the documented rules; the
budget against the journal (what was really spent) for several budgets, including 0 and one
that fits exactly, and a resume with a larger budget that must not repay any call.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from helpers.project import REPO, TRIAGE, journal_records, lrc_env, run_lrc
from helpers.shared import small_demo_lock
from support import pinned

N = 3
MODELS = ("lrc/oracle", "lrc/baseline")
SYSTEMS = ("single-shot", "agentic")
PRICES = {"lrc/oracle": ("3", "15"), "lrc/baseline": ("1.25", "10")}
MAX_TOKENS = 2000
EXIT_BUDGET = 7
EXTRACT = pinned("extract.invoice")


def _edition(edition_id: str, models: str, pricing: str, workloads: tuple[str, ...] = (TRIAGE,), n: int = N) -> str:
    return (
        "# yaml-language-server: $schema=../../schemas/edition.schema.json\n"
        "kind: edition\n"
        f"id: {edition_id}\nversion: 1\ntitle: estimate and budget test edition\ndate: \"2026-11-29\"\n"
        f"standard: {pinned('ledgerrate')}\nanalysis: {pinned('lrc.analysis')}\n"
        "workloads:\n" + "".join(f"  - {w}\n" for w in workloads) +
        f"systems:\n  - {pinned('single-shot')}\n  - {pinned('agentic')}\n"
        "models:\n" + models + "pricing:\n" + pricing +
        f"n_per_cell: {n}\nrepetitions: 1\nwindow_hours: 72\n"
        "seed:\n  policy: public\n  value: ledgerrate-demo-2026-11\n"
        "qualifying:\n  min_pass_rate: \"0.80\"\n"
        "brand: LedgerRate\nfooter: test\ndisclaimer: test edition, not a measurement.\nerrata: []\n"
    )


def _price(model: str, inp: str, out: str, extra: str = "") -> str:
    return (f"  {model}:\n    currency: USD\n    per_tokens: 1000000\n    input: \"{inp}\"\n    output: \"{out}\"\n{extra}"
            f"    as_of: \"2026-11-29\"\n    source: test price\n")


def _reference_models(max_tokens: int | None) -> str:
    sampling = f"{{temperature: 0, max_tokens: {max_tokens}}}" if max_tokens else "{temperature: 0}"
    return (f"  - id: lrc/oracle\n    role: infrastructure-check\n    sampling: {sampling}\n"
            f"  - id: lrc/baseline\n    role: baseline\n    sampling: {sampling}\n")


REAL_MODELS = (
    "  - id: openai/gpt-4.1-mini\n    role: candidate\n    sampling: {temperature: 0}\n    accepts_files: true\n"
    "  - id: anthropic/claude-haiku-4-5\n    role: candidate\n    sampling: {temperature: 0, max_tokens: 8192}\n"
    "    provider_exception: test\n"
    "  - id: together_ai/meta-llama/Llama-3-70b-chat-hf\n    role: candidate\n    sampling: {temperature: 0, max_tokens: 4096}\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    from lrc.compiler.pipeline import compile_project

    root = tmp_path_factory.mktemp("estimate-project")
    for name in ("specs", "schemas"):
        shutil.copytree(REPO / name, root / name)
    standard = root / "specs" / "standard" / "ledgerrate.yaml"
    text = standard.read_text(encoding="utf-8")
    found = re.search(r"(?m)^  n_per_cell: (\d+)", text)
    if found:
        standard.write_text(text[:found.start(1)] + "2" + text[found.end(1):], encoding="utf-8")
    editions = root / "specs" / "editions"
    for other in editions.glob("*.yaml"):  # only this test's editions: compiling is the slow part
        other.unlink()
    priced = "".join(_price(m, *PRICES[m]) for m in MODELS)
    editions.joinpath("priced.yaml").write_text(_edition("priced", _reference_models(MAX_TOKENS), priced), encoding="utf-8")
    editions.joinpath("inputonly.yaml").write_text(
        _edition("inputonly", _reference_models(None), "".join(_price(m, PRICES[m][0], "0") for m in MODELS)), encoding="utf-8")
    editions.joinpath("unbounded.yaml").write_text(_edition("unbounded", _reference_models(None), priced), encoding="utf-8")
    real_prices = (_price("openai/gpt-4.1-mini", "0.4", "1.6", '    cached_input: "0.1"\n')
                   + _price("anthropic/claude-haiku-4-5", "1", "5", '    cached_input: "0.1"\n    cache_write: "1.25"\n')
                   + _price("together_ai/meta-llama/Llama-3-70b-chat-hf", "0.88", "0.88"))
    editions.joinpath("real.yaml").write_text(_edition("real", REAL_MODELS, real_prices, (TRIAGE, EXTRACT), n=2), encoding="utf-8")
    result = compile_project(root)
    assert not result.diagnostics.has_errors, "\n".join(str(d) for d in result.diagnostics.sorted())
    return root


def lock_of(project: Path, edition: str) -> Path:
    return project / "generated" / edition / "plan.lock"


def estimate_json(lock: Path) -> dict:
    res = run_lrc("estimate", lock, "--format", "json")
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout, parse_float=_no_float)


def _no_float(text: str):
    raise AssertionError(f"a float in JSON output: {text} (money and counts are decimal strings and integers)")


COUNTS = ("tokens", "input", "output", "cached_input", "reasoning", "calls", "runs", "passes", "partials", "items", "steps", "n")


def _no_money_or_count_float(value, where: str = "") -> None:
    """summary.json also carries rates and probabilities (intervals, pass^k, design effects,
    sign-test p), which are floats by nature; money and counts never are."""
    if isinstance(value, dict):
        for key, item in value.items():
            _no_money_or_count_float(item, f"{where}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_money_or_count_float(item, f"{where}[{i}]")
    elif isinstance(value, float):
        leaf = where.rsplit("/", 1)[-1].split("[")[0]
        money = leaf.endswith("usd") or leaf in ("cost", "price")
        count = leaf in COUNTS or ("rate" not in leaf and any(leaf.endswith("_" + w) for w in COUNTS if w != "n"))
        assert not (money or count), \
            f"a float for money or a count in JSON output: {where} = {value}"


def spent_in(out: Path, prices: dict[str, tuple[str, str]]) -> Decimal:
    """What the journal says was paid: every call's usage at the frozen prices."""
    total = Decimal(0)
    for rec in journal_records(out):
        if rec.get("type") == "call":
            model = rec["run"].split("|")[1]
            u = rec["usage"]
            total += (u["input"] * Decimal(prices[model][0]) + u["output"] * Decimal(prices[model][1])) / 1_000_000
    return total


def calls_of(out: Path) -> list[tuple[str, int]]:
    return [(r["run"], r["step"]) for r in journal_records(out) if r.get("type") == "call"]


def execute(lock: Path, out: Path, *extra: str):
    return run_lrc("execute", lock, "--out", out, "--no-progress", *extra, env=lrc_env())


# -- lrc estimate ------------------------------------------------------------------------------

def _hand_computed(lock: Path) -> dict[tuple[str, str, str], dict[str, Decimal]]:
    """Every cell's low/expected/high cost, from the documented rules, with the reference
    models' own token count (lrc.runtime.models.reference) -- not the estimate's code. A
    correct answer is what the workload's oracle writes for the item's single-shot request."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import import_modules, load_verified, render_messages
    from lrc.runtime.models.reference import _prompt_text, estimate_tokens

    lock_data = load_verified(lock)
    plan = lock_data["plan"]
    items = item_gen.generate(plan, plan["seed"]["value"])
    modules = import_modules(plan)
    cells: dict[tuple[str, str, str], dict[str, Decimal]] = {}
    for wref, wl in plan["workloads"].items():
        for model_id, model in plan["models"].items():
            p_in, p_out = (Decimal(model["price"]["input"]) / 1_000_000, Decimal(model["price"]["output"]) / 1_000_000)
            for system in SYSTEMS:
                tools = wl["tools"].get(system) or None
                max_steps = 25 if system == "agentic" else 1
                chars = wl["spec"]["systems"][system].get("tools", {}).get("max_result_chars", 20000)
                cell = cells.setdefault((wref, model_id, system), {"low": Decimal(0), "expected": Decimal(0), "high": Decimal(0)})
                for item in items[wref]:
                    first = estimate_tokens(_prompt_text(render_messages(wl, system, item, model), tools))
                    key = estimate_tokens(json.dumps(item.answer_key, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
                    oracle = modules[wl["spec"]["reference"]["implementation"]].oracle(
                        render_messages(wl, "single-shot", item, model), None, item).content
                    assert oracle and estimate_tokens(oracle) != key  # the two bases differ, so the test tells them apart
                    for level, answer, factor, steps, call, result in (
                            ("low", 0, 0, 1, 60, 400), ("expected", estimate_tokens(oracle), Decimal("1.5"), 5, 60, 400),
                            ("high", max(key, estimate_tokens(oracle)), 3, max_steps, 180, math.ceil(chars / 4))):
                        out_answer = min(math.ceil(answer * factor), MAX_TOKENS)
                        if system == "single-shot":
                            steps = 1
                        tokens_in = steps * first + steps * (steps - 1) // 2 * (call + result)
                        tokens_out = (steps - 1) * call + out_answer
                        cell[level] += tokens_in * p_in + tokens_out * p_out
    return cells


def test_estimate_matches_hand_computed_figures_per_cell_and_in_total(project):
    lock = lock_of(project, "priced")
    got = estimate_json(lock)
    want = _hand_computed(lock)
    assert got["runs"] == len(MODELS) * len(SYSTEMS) * N
    assert {(c["workload"], c["model"], c["system"]) for c in got["cells"]} == set(want)
    for cell in got["cells"]:
        key = (cell["workload"], cell["model"], cell["system"])
        assert cell["runs"] == N
        for level in ("low", "expected", "high"):
            assert Decimal(cell[level]["cost_usd"]) == want[key][level], (key, level)
        assert Decimal(cell["low"]["cost_usd"]) < Decimal(cell["expected"]["cost_usd"]) < Decimal(cell["high"]["cost_usd"])
    for level in ("low", "expected", "high"):
        assert Decimal(got["total"][level]["cost_usd"]) == sum(w[level] for w in want.values())
        assert got["total"][level]["cost_usd"] == str(Decimal(got["total"][level]["cost_usd"]))  # a plain decimal string
    assert any("max_steps" in a for a in got["assumptions"]) and any("answer key" in a for a in got["assumptions"])
    assert set(got["token_counting"]) == set(MODELS)


def test_estimate_text_prints_cells_total_and_the_declared_assumptions(project):
    res = run_lrc("estimate", lock_of(project, "priced"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"{len(MODELS) * len(SYSTEMS) * N} runs, before any call" in out
    assert re.search(r"(?m)^total\s+12\s+\$\d", out)
    for needle in ("Assumptions", "steps of agentic: low 1 / expected 5", "high 25 (the locked max_steps)",
                   f"max output of lrc/oracle: {MAX_TOKENS} tokens (max_tokens in its locked sampling)",
                   "ceil(characters / 4)", "Token counting"):
        assert needle in out, needle


@pytest.mark.parametrize("damage", ["no price", "no output price", "float price"])
def test_unknown_price_is_an_error_never_zero(project, damage):
    from lrc.runtime import estimate
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import load_verified

    plan = load_verified(lock_of(project, "priced"))["plan"]
    price = plan["models"]["lrc/baseline"]
    if damage == "no price":
        del price["price"]
    elif damage == "no output price":
        del price["price"]["output"]
    else:
        price["price"]["input"] = 1.25
    with pytest.raises(estimate.EstimateError, match="lrc/baseline|price"):
        estimate.forecast(plan, "sha256:x", item_gen.generate(plan, plan["seed"]["value"]))


_OFFLINE_PROBE = r"""
import socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args)[:200])
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from lrc.compiler.cli import main
code = main(sys.argv[1:])
print("NETWORK-ATTEMPTS", len(attempts), attempts, file=sys.stderr)
print("LITELLM-IMPORTED", "litellm" in sys.modules, file=sys.stderr)
sys.exit(code)
"""


def _offline(*args: str) -> subprocess.CompletedProcess:
    env = lrc_env(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", ALL_PROXY="http://127.0.0.1:9")
    return subprocess.run([sys.executable, "-c", _OFFLINE_PROBE, *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_estimate_of_real_models_counts_offline_and_never_connects(project):
    res = _offline("estimate", str(lock_of(project, "real")), "--format", "json")
    assert res.returncode == 0, res.stderr
    assert "NETWORK-ATTEMPTS 0 []" in res.stderr, res.stderr
    got = json.loads(res.stdout, parse_float=_no_float)
    counting = got["token_counting"]
    assert "offline token counter" in counting["openai/gpt-4.1-mini"]
    # litellm would download a Llama 3 tokenizer: the estimate falls back to a bundled encoding and says so.
    assert "cl100k_base" in counting["together_ai/meta-llama/Llama-3-70b-chat-hf"]
    assert "never fetches" in counting["together_ai/meta-llama/Llama-3-70b-chat-hf"]
    assert any("attached files (PDF)" in a for a in got["assumptions"])
    assert any("max output of openai/gpt-4.1-mini: 32768 tokens" in a and "litellm's bundled model map" in a
               for a in got["assumptions"])
    for cell in got["cells"]:
        assert cell["low"]["input_tokens"] > 0 and Decimal(cell["low"]["cost_usd"]) > 0
    # The PDF is attached for gpt-4.1-mini (accepts_files) and counted by its pages: its input differs from the text mode's.
    invoice = {c["model"]: c for c in got["cells"] if c["workload"] == EXTRACT and c["system"] == "single-shot"}
    assert invoice["openai/gpt-4.1-mini"]["low"]["input_tokens"] != invoice["anthropic/claude-haiku-4-5"]["low"]["input_tokens"]


def test_estimate_of_reference_models_does_not_import_litellm(project):
    res = _offline("estimate", str(lock_of(project, "priced")))
    assert res.returncode == 0, res.stderr
    assert "NETWORK-ATTEMPTS 0 []" in res.stderr
    assert "LITELLM-IMPORTED False" in res.stderr


def test_estimate_refuses_a_spec_and_a_held_out_edition_without_its_seed(project):
    res = run_lrc("estimate", project / "specs" / "editions" / "priced.yaml")
    assert res.returncode == 2 and "LRC8301" in res.stderr
    res = run_lrc("estimate", REPO / "generated" / "2026-12" / "plan.lock")
    assert res.returncode in (4,), res.stderr
    assert "--seed-file" in res.stderr or "refused" in res.stderr


# -- --budget ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full_run(project, tmp_path_factory):
    """One unbudgeted run of `priced`: (out, what it spent, its calls)."""
    out = tmp_path_factory.mktemp("full") / "out"
    res = execute(lock_of(project, "priced"), out)
    assert res.returncode == 0, res.stderr
    return out, spent_in(out, PRICES), calls_of(out)


def test_forecast_vs_actual_in_summary_json_and_the_report(project, full_run):
    out, spent, _ = full_run
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    _no_money_or_count_float(summary)
    json.loads(json.dumps(summary["forecast_vs_actual"]), parse_float=_no_float)  # the forecast: no float at all
    table = summary["forecast_vs_actual"]
    estimate = estimate_json(lock_of(project, "priced"))
    by_cell = {(c["workload"], c["model"], c["system"]): c for c in estimate["cells"]}
    assert len(table["cells"]) == len(by_cell)
    for row in table["cells"]:
        fc = by_cell[(row["workload"], row["model"], row["system"])]
        assert row["runs_done"] == row["runs_planned"] == N
        assert row["forecast_usd"] == {lv: fc[lv]["cost_usd"] for lv in ("low", "expected", "high")}  # the same code
        assert row["forecast_done_usd"] == fc["expected"]["cost_usd"]
        if row["system"] == "single-shot":  # one request: its input is counted exactly for the reference models
            assert row["tokens"]["actual"]["input"] == row["tokens"]["forecast_done"]["input"] == fc["low"]["input_tokens"]
    assert Decimal(table["total"]["actual_usd"]) == spent
    assert table["total"]["forecast_usd"]["expected"] == estimate["total"]["expected"]["cost_usd"]
    md = (out / "forecast-vs-actual.md").read_text(encoding="utf-8")
    assert "| workload | model | system |" in md and "Assumptions:" in md
    # `lrc report` rebuilds it byte for byte from the journal and the lock.
    before = (out / "summary.json").read_bytes(), md
    res = run_lrc("report", lock_of(project, "priced"), "--out", out, env=lrc_env())
    assert res.returncode == 0, res.stderr
    assert ((out / "summary.json").read_bytes(), (out / "forecast-vs-actual.md").read_text(encoding="utf-8")) == before


def test_the_forecasts_low_is_a_floor_of_every_cell_of_a_run(small_demo_run):
    """`low` is a run that writes nothing (as lrc/null answers): its first request only, which every
    run pays. So no cell costs less than its low, whatever its models answered -- the demo's
    candidates answer query.nl2sql with one SQL query, far shorter than the answer key's rows,
    and extract.invoice, board-brief and variance-commentary shorter than their keys: at 1x the
    key, 10 of the full demo's 22 priced cells cost less than their "low"."""
    _, out, res = small_demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    table = json.loads((out / "summary.json").read_text(encoding="utf-8"))["forecast_vs_actual"]
    priced = [row for row in table["cells"] if Decimal(row["forecast_usd"]["high"]) > 0]
    assert {row["system"] for row in priced} >= {"single-shot", "agentic"}
    for row in priced:
        assert row["runs_done"] == row["runs_planned"], row
        low, high = Decimal(row["forecast_usd"]["low"]), Decimal(row["forecast_usd"]["high"])
        assert 0 < low <= Decimal(row["actual_usd"]) <= high, row
    total = table["total"]
    assert Decimal(total["forecast_usd"]["low"]) <= Decimal(total["actual_usd"]) <= Decimal(total["forecast_usd"]["high"])


def test_the_forecasts_expected_answer_is_what_the_oracle_writes(small_demo_run):
    """`expected` writes 1.5x what a correct answer is, and a correct answer is the embedded
    oracle's (shown the item whole), not the answer key: lrc/oracle's single-shot cells, which
    write exactly that answer and are billed ceil(characters / 4) of it, are forecast at 1.5x
    their actual output tokens, up to one token of rounding per run. With the key as the base
    (before), query.nl2sql's oracle cell was forecast ~9x its output: the key holds the result
    rows, the oracle writes one SQL query."""
    _, out, res = small_demo_run
    assert res.returncode == 0, res.stdout + res.stderr
    table = json.loads((out / "summary.json").read_text(encoding="utf-8"))["forecast_vs_actual"]
    cells = [row for row in table["cells"] if row["model"] == "lrc/oracle" and row["system"] == "single-shot"]
    assert {row["workload"].rsplit(".v", 1)[0] for row in cells} >= {"query.nl2sql", "extract.invoice", "triage.ap-inbox"}
    for row in cells:
        actual, forecast = row["tokens"]["actual"]["output"], row["tokens"]["forecast_done"]["output"]
        assert row["runs_done"] > 0 and actual > 0, row
        assert 1.5 * actual <= forecast <= 1.5 * actual + row["runs_done"], row
    assert any("lrc/oracle writes" in a for a in table["assumptions"]), table["assumptions"]


@pytest.mark.parametrize("fraction", ["0", "0.3", "0.8"])
def test_budget_never_exceeded_and_resume_with_more_repays_nothing(project, full_run, tmp_path, fraction):
    full_out, full_spent, full_calls = full_run
    budget = (full_spent * Decimal(fraction)).quantize(Decimal("0.000001"))
    out = tmp_path / "out"
    res = execute(lock_of(project, "priced"), out, "--budget", str(budget))
    assert res.returncode == EXIT_BUDGET, res.stderr
    spent = spent_in(out, PRICES)
    assert spent <= budget
    assert f"spent ${_plain(spent)} of the budget ${_plain(budget)}; left ${_plain(budget - spent)}" in res.stderr, res.stderr
    assert "larger --budget to resume" in res.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] is True and summary["runs_not_run"] > 0  # runs never started: partial, not excluded
    if fraction == "0":
        assert calls_of(out) == []
    made = calls_of(out)
    # A larger budget resumes: the journaled calls are not made again, and the run ends like an unbudgeted one.
    res = execute(lock_of(project, "priced"), out, "--budget", str(full_spent * 2))
    assert res.returncode == 0, res.stderr
    assert "(${} of it by earlier executes in this folder)".format(_plain(spent)) in res.stderr or spent == 0
    calls = calls_of(out)
    assert len(calls) == len(set(calls)) == len(full_calls), "a call was made twice"
    assert calls[:len(made)] == made
    assert spent_in(out, PRICES) == full_spent
    assert (out / "cells.csv").read_bytes() == (full_out / "cells.csv").read_bytes()


def _plain(amount: Decimal) -> str:
    from lrc.runtime.pricing import decimal_str

    return decimal_str(amount)


def test_budget_that_fits_exactly_completes_and_one_below_stops(project, tmp_path):
    """With no output price a call's worst case is its cost (the reference models' input count
    is exact), so the total of a full run is the smallest budget that completes it."""
    lock = lock_of(project, "inputonly")
    prices = {m: (PRICES[m][0], "0") for m in MODELS}
    first = tmp_path / "free"
    assert execute(lock, first).returncode == 0
    total = spent_in(first, prices)
    assert total > 0
    exact = tmp_path / "exact"
    res = execute(lock, exact, "--budget", _plain(total))
    assert res.returncode == 0, res.stderr
    assert f"spent ${_plain(total)} of the budget ${_plain(total)}; left $0" in res.stderr
    below = tmp_path / "below"
    res = execute(lock, below, "--budget", _plain(total - Decimal("0.000001")))
    assert res.returncode == EXIT_BUDGET, res.stderr
    assert spent_in(below, prices) <= total - Decimal("0.000001")
    assert len(calls_of(below)) < len(calls_of(exact))


def test_budget_with_zero_prices_is_never_reached(tmp_path, tmp_path_factory):
    """The demo's calibration models and baseline are priced at $0: a $0 budget runs all of
    their runs (small demo; its priced reference candidates are left out with --models)."""
    res = execute(small_demo_lock(tmp_path_factory), tmp_path / "out", "--budget", "0",
                  "--models", "lrc/oracle,lrc/null,lrc/baseline")
    assert res.returncode == 0, res.stderr
    assert "spent $0 of the budget $0; left $0" in res.stderr


def test_a_budget_with_a_priced_reference_candidate_needs_an_output_bound(tmp_path, tmp_path_factory):
    """lrc/careful and lrc/cheap carry demo prices and declare no max_tokens: a budget cannot be
    kept for them, and lrc says so before any call."""
    out = tmp_path / "out"
    res = execute(small_demo_lock(tmp_path_factory), out, "--budget", "1")
    assert res.returncode == 1, res.stderr
    assert "lrc/careful" in res.stderr and "no bound on a call's output is known" in res.stderr
    assert calls_of(out) == [] if (out / "journal.jsonl").exists() else True


def test_budget_refused_when_no_output_bound_is_known(project, tmp_path):
    out = tmp_path / "out"
    res = execute(lock_of(project, "unbounded"), out, "--budget", "100")
    assert res.returncode == 1, res.stderr
    assert "no bound on a call's output is known" in res.stderr and "max_tokens" in res.stderr
    assert calls_of(out) == [] if (out / "journal.jsonl").exists() else True


@pytest.mark.parametrize("bad", ["-1", "abc", "nan", "1e3", "inf", ""])
def test_budget_flag_takes_a_plain_decimal_amount(tmp_path, bad):
    res = run_lrc("execute", REPO / "generated" / "demo" / "plan.lock", "--out", tmp_path / "o", "--budget", bad)
    assert res.returncode == 2, res.stderr
    assert "--budget" in res.stderr
    assert not (tmp_path / "o").exists()
