"""Grading of generate.variance-commentary answers: deterministic checks, then the judge's scores.

The answer (output.schema.json) is
    {"drivers": [{"line", "variance", "variance_pct", "cause", "cause_note"} x 3],
     "commentary": "<prose, at most 300 words>"}.

Why it is built this way (seed 001 §4.4, §5.2):

- `figures-match-source` (blocking): every figure cited in the commentary and in the causes is a
  source figure or a declared derivation, read and matched by lrc.runtime.checks.figures under
  its published rules (number boundaries, k/m/bn, written precision). The allowed figures are
  in the answer key (generator.allowed_figures): table amounts, variance and % variance of
  every line, category total, the gross margin and the operating result, and every number
  in the notes. A text too long to read is a fail, never an exception.
- `top-drivers` (blocking): the three drivers are exactly the three lines with the largest
  |variance| (in any order; the order is reported as info), each once, and each driver's
  `variance` and `variance_pct` fields state that line's signed variance (actual - budget)
  and % variance (of budget) at their written precision.
- `length` (blocking): the commentary has at most `max_words` (300) words, a word being a
  run of non-space characters.
- The judge runs only when all of these pass (the runtime's rule). `judge_material` shows it
  the commentary followed by the submitted drivers (one line each, with the cited note), and
  the table and notes as source; `judge_results` turns a rubric-shaped judgment (by the judge
  or by a human reviewer, the same function) into one blocking result per criterion: a
  criterion passes at `pass_threshold` or above; a judgment that is not a dict of integer
  scores fails every criterion.
- `normalize` forgives formatting (line ids "l4" -> "L04", note ids "n2" -> "N2", "none" ->
  null, numbers given as JSON numbers -> strings, stray whitespace) and never raises: an answer
  of another shape comes back unchanged for the output contract to reject.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Mapping

from lrc.runtime.checks import figures
from lrc.runtime.checks.results import ValidatorResult, result
from lrc.runtime.workloads.base import Item
from lrc.runtime.workloads.generate_variance_commentary import derive

COMPONENT_ID = "generate.variance-commentary.grading"
COMPONENT_VERSION = 2

FIGURES = "generate.variance-commentary.figures-match-source"
DRIVERS = "generate.variance-commentary.top-drivers"
DRIVER = "generate.variance-commentary.driver"
LENGTH = "generate.variance-commentary.length"
JUDGE = "generate.variance-commentary.judge-score"
MAX_WORDS = 300
SHOWN = 20
"""At most this many offending figures are listed in a result."""
_NONE_NOTES = frozenset({"", "none", "null", "n/a", "na", "-"})
DRIVERS_HEADING = "Drivers as submitted:"
"""The heading judge_material puts between the commentary and the driver lines (the reference judge reads after it)."""


# --------------------------------------------------------------------------------------
# normalization


def _canon_id(value: Any, prefix: str, width: int) -> Any:
    """' l4 ' -> 'L04' (prefix + zero-padded digits); other strings stripped; non-strings unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    head, digits = text[:1], text[1:].strip()
    if head.upper() == prefix and digits.isdigit() and digits.isascii() and len(digits) <= 6:
        return f"{prefix}{int(digits):0{width}d}"
    return text


def _as_text(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return value.strip() if isinstance(value, str) else value


def _driver(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return entry
    out = dict(entry)
    if "line" in out:
        out["line"] = _canon_id(out["line"], "L", 2)
    for name in ("variance", "variance_pct"):
        if name in out:
            out[name] = _as_text(out[name])
    if isinstance(out.get("cause"), str):
        out["cause"] = out["cause"].strip()
    note = out.get("cause_note")
    if isinstance(note, str):
        out["cause_note"] = None if note.strip().lower() in _NONE_NOTES else _canon_id(note, "N", 1)
    return out


def normalize(answer: Any) -> Any:
    """Canonical ids, numbers as strings, stripped text; anything unexpected comes back unchanged."""
    try:
        if not isinstance(answer, Mapping):
            return answer
        out = dict(answer)
        if isinstance(out.get("drivers"), list):
            out["drivers"] = [_driver(d) for d in out["drivers"]]
        if isinstance(out.get("commentary"), str):
            out["commentary"] = out["commentary"].strip()
        return out
    except Exception:  # noqa: BLE001 - normalization must never raise; the contract check decides
        return answer


# --------------------------------------------------------------------------------------
# deterministic checks


def _decimals(values: Any) -> list[Decimal]:
    out = []
    for v in values if isinstance(values, list) else []:
        try:
            out.append(Decimal(str(v)))
        except InvalidOperation:
            continue
    return out


def _drivers(answer: Any) -> list[Mapping[str, Any]]:
    entries = answer.get("drivers") if isinstance(answer, Mapping) else None
    return [d for d in entries if isinstance(d, Mapping)] if isinstance(entries, list) else []


def _texts(answer: Any) -> list[tuple[str, str]]:
    """(location, text) of every prose field whose figures are checked."""
    out = []
    if isinstance(answer, Mapping) and isinstance(answer.get("commentary"), str):
        out.append(("/commentary", answer["commentary"]))
    for n, d in enumerate(_drivers(answer)):
        if isinstance(d.get("cause"), str):
            out.append((f"/drivers/{n}/cause", d["cause"]))
    return out


def figures_match_source(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """Every figure cited in the commentary and causes matches an allowed figure (module docstring)."""
    allowed, percent_allowed = _decimals(key.get("allowed")), _decimals(key.get("percent_allowed"))
    bad: list[str] = []
    where: list[str] = []
    cited = 0
    for location, text in _texts(answer):
        try:
            found = figures.cited_figures(text)
        except figures.TextTooLong as exc:
            return [result(FIGURES, COMPONENT_VERSION, "fail", observed=f"{len(text):,} characters", expected="a readable text",
                           location=location, message=str(exc))]
        cited += len(found)
        for f in figures.unmatched(found, allowed, percent_allowed):
            bad.append(f.text)
            where.append(location)
    if bad:
        shown = ", ".join(repr(b) for b in bad[:SHOWN]) + (f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
        return [result(FIGURES, COMPONENT_VERSION, "fail", observed=bad[:SHOWN], expected="source figures or declared derivations",
                       location=sorted(set(where)),
                       message=f"{len(bad)} of {cited} cited figures match no source figure or declared derivation: {shown}.")]
    return [result(FIGURES, COMPONENT_VERSION, "pass", observed=f"{cited} figures cited", expected="source figures or declared derivations",
                   location="/", message=f"All {cited} cited figures match the source or a declared derivation.")]


def _states(text: Any, expected: Decimal) -> bool:
    """`text` holds exactly one figure, with the sign of `expected`, matching it at its written precision."""
    if not isinstance(text, str) or len(text) > 200:
        return False
    found = [f for f in figures.scan(text, figures.Rules(count_max=None)) if f.kind == "figure"]
    if len(found) != 1:
        return False
    f = found[0]
    if expected != 0 and f.value != 0 and (f.value < 0) != (expected < 0):
        return False
    return figures.matches(f, expected)


def top_drivers(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """The three drivers are the key's top 3 by |variance|, each stated with its variance and % variance."""
    gold = {d["line"]: d for d in key["top3"]}
    expected_order = [d["line"] for d in key["top3"]]
    drivers = _drivers(answer)
    given = [d.get("line") for d in drivers]
    details: list[ValidatorResult] = []
    problems: list[str] = []
    if len(given) != len(gold) or len(set(map(str, given))) != len(given):
        problems.append(f"{len(given)} driver entries ({len(set(map(str, given)))} distinct lines); {len(gold)} distinct needed")
    missing = [line for line in expected_order if line not in given]
    extra = [str(line)[:40] for line in given if not (isinstance(line, str) and line in gold)]
    if missing:
        problems.append(f"missing top driver(s) {', '.join(missing)}")
    if extra:
        problems.append(f"not a top-3 driver: {', '.join(extra[:SHOWN])}")
    for n, d in enumerate(drivers):
        line = d.get("line")
        if not isinstance(line, str) or line not in gold:
            continue
        g = gold[line]
        for field, value, shown in (("variance", Decimal(g["variance"]), derive.money_text(Decimal(g["variance"]), signed=True)),
                                    ("variance_pct", Decimal(g["variance_pct"]), g["variance_pct_shown"])):
            if not _states(d.get(field), value):
                problems.append(f"{line} {field} {str(d.get(field))[:40]!r} is not {shown}")
                details.append(result(DRIVER, COMPONENT_VERSION, "fail", severity="info", observed=d.get(field) if isinstance(d.get(field), str) else None,
                                      expected=shown, location=f"/drivers/{n}/{field}",
                                      message=f"{line}: {field} should state {shown} (actual - budget; % of budget)."))
    ok = not problems
    if ok and given != expected_order:
        details.append(result(DRIVER, COMPONENT_VERSION, "fail", severity="info", observed=given, expected=expected_order,
                              location="/drivers", message="The drivers are right but not ranked by |variance|."))
    summary = result(DRIVERS, COMPONENT_VERSION, "pass" if ok else "fail", observed=[str(g) for g in given][:SHOWN],
                     expected=expected_order, location="/drivers",
                     message="The top-3 drivers by |variance| are named with their variance and % variance." if ok
                     else "; ".join(problems[:SHOWN]) + ".")
    return [summary, *details]


def words(text: str) -> int:
    """Words of a text: runs of non-space characters."""
    return len(text.split())


def length(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """The commentary has at most params max_words (300) words."""
    limit = int(params.get("max_words", MAX_WORDS))
    text = answer.get("commentary") if isinstance(answer, Mapping) else None
    count = words(text) if isinstance(text, str) else 0
    ok = isinstance(text, str) and 0 < count <= limit
    return [result(LENGTH, COMPONENT_VERSION, "pass" if ok else "fail", observed=f"{count} words", expected=f"1 to {limit} words",
                   location="/commentary", message=f"The commentary has {count} words; at most {limit} are allowed.")]


VALIDATORS = {"figures-match-source": figures_match_source, "top-drivers": top_drivers, "length": length}


# --------------------------------------------------------------------------------------
# the judge step


def _one_line(value: Any, limit: int = 600) -> str:
    text = " ".join(str(value).split()) if value is not None else ""
    return text[:limit]


def judge_material(answer: dict, key: dict, item: Item) -> dict:
    """The commentary then the submitted drivers (one line each) as output; the table and notes as source."""
    names = {row["id"]: row["name"] for row in item.context.get("lines", [])}
    commentary = answer.get("commentary") if isinstance(answer, Mapping) else ""
    lines = [str(commentary) if isinstance(commentary, str) else "", "", DRIVERS_HEADING]
    for n, d in enumerate(_drivers(answer), start=1):
        line = _one_line(d.get("line"), 40)
        note = d.get("cause_note")
        lines.append(f"{n}. {line} {names.get(line, '')}: variance {_one_line(d.get('variance'), 40)} "
                     f"({_one_line(d.get('variance_pct'), 40)}); cause: {_one_line(d.get('cause'))} "
                     f"[note: {_one_line(note, 20) if isinstance(note, str) and note else 'none'}]")
    return {"output": "\n".join(lines), "source": source_text(item), "checks": []}


def source_text(item: Item) -> str:
    """The table (with the declared derivations) and the notes, as the judge reads them."""
    ctx = item.context
    out = [f"{ctx.get('entity', '')}, {ctx.get('period', '')} ({ctx.get('currency', 'USD')})",
           "line | name | category | budget | actual | variance | % variance"]
    for row in ctx.get("lines", []):
        b, a = Decimal(row["budget"]), Decimal(row["actual"])
        out.append(f"{row['id']} | {row['name']} | {row['category']} | {derive.money_text(b)} | {derive.money_text(a)} | "
                   f"{derive.money_text(derive.variance(b, a), signed=True)} | {derive.pct_text(derive.variance_pct(b, a))}")
    out += ["", "Notes:"] + [f"{n['id']}: {n['text']}" for n in ctx.get("notes", [])]
    return "\n".join(out)


def judge_results(judgment: dict, key: dict, rubric: dict, params: dict) -> list[ValidatorResult]:
    """One blocking result per rubric criterion: pass at the rubric's pass_threshold or above."""
    threshold = rubric.get("pass_threshold", 4) if isinstance(rubric, Mapping) else 4
    scale = rubric.get("scale", {}) if isinstance(rubric, Mapping) else {}
    lo, hi = scale.get("min", 1), scale.get("max", 5)
    criteria = [c.get("id") for c in rubric.get("criteria", []) if isinstance(c, Mapping)] if isinstance(rubric, Mapping) else []
    criteria = criteria or ["clarity", "cause_attribution"]
    out = []
    for name in criteria:
        score = judgment.get(name) if isinstance(judgment, Mapping) else None
        valid = isinstance(score, int) and not isinstance(score, bool) and lo <= score <= hi
        ok = valid and score >= threshold
        out.append(result(JUDGE, COMPONENT_VERSION, "pass" if ok else "fail", observed=score if valid else None,
                          expected=f">= {threshold} of {lo}..{hi}", location=str(name),
                          message=f"{name}: {score}/{hi}, {'at or above' if ok else 'below'} the pass threshold {threshold}." if valid
                          else f"{name}: no valid score in the judgment."))
    return out
