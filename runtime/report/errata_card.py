"""The rate card's correction block for a folder regraded by errata (`lrc regrade`, seed 001 §7).

Errors are corrected loudly: a regraded card says so above its footer -- "CORRECTED by erratum
E-…: <note> (date)" for each erratum applied, the changelog, what each correction did, and the
cells side by side, old and new, each marked changed or not. The old values are the cells of the
folder that was regraded, recorded in its erratum.json (`lrc.runtime.errata`), so the block is
rebuilt from the regraded folder alone. A card of a folder no erratum touched shows nothing.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from lrc.runtime.report.labels import model_label

CELL_KEY = ("workload", "model", "system")
COMPARED = ("n", "passes", "pass_rate", "cost_usd", "cpo_usd")


def cell_values(row: Mapping[str, Any]) -> dict[str, Any]:
    """The compared values of one cell row (cells.parquet or the in-memory cells), as plain data."""
    rate = row.get("pass_rate")
    return {"n": int(row["n"]), "passes": int(row["passes"]),
            "pass_rate": None if rate is None else f"{float(rate):.4f}",
            "cost_usd": None if row.get("cost_usd") is None else str(row["cost_usd"]),
            "cpo_usd": None if row.get("cpo_usd") is None else str(row["cpo_usd"])}


def comparison(before: Iterable[Mapping[str, Any]], rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per cell (sorted): old and new values and whether they differ. A cell only one side has
    (a workload excluded whole) is listed with null on the other side."""
    old = {tuple(r[k] for k in CELL_KEY): dict(r["values"]) if "values" in r else cell_values(r) for r in before}
    new = {tuple(r[k] for k in CELL_KEY): cell_values(r) for r in rows}
    out = []
    for key in sorted(set(old) | set(new)):
        o, n = old.get(key), new.get(key)
        out.append({"workload": key[0], "model": key[1], "system": key[2], "old": o, "new": n, "changed": o != n})
    return out


def _money(value: Any) -> str:
    if value is None:
        return "∞"
    return f"${value}"


def _side(v: Mapping[str, Any] | None) -> tuple[str, str, str]:
    if v is None:
        return ("—", "—", "—")
    rate = "n/a" if v["pass_rate"] is None else f"{v['passes']}/{v['n']} ({float(v['pass_rate']):.2f})"
    return (rate, _money(v["cost_usd"]), _money(v["cpo_usd"]))


def describe(correction: Mapping[str, Any], code: Mapping[str, Any]) -> str:
    """One line of the changelog for one correction."""
    if "regrade_with" in correction:
        ref = correction["regrade_with"]
        replaced = (code.get(ref) or {}).get("replaces", "the locked version")
        return f"re-graded with {ref} (replacing {replaced}); no model was called"
    if "exclude" in correction:
        ex = correction["exclude"]
        return f"item {ex['item']} of {ex['workload']} excluded: {ex['reason']}"
    price = correction["price"]
    block = price["pricing"]
    classes = ", ".join(f"{k} {block[k]}" for k in ("input", "cached_input", "cache_write", "output", "reasoning") if k in block)
    return f"price of {model_label(price['model'])} corrected to {classes} USD per {block['per_tokens']:,} tokens ({block['source']}, as of {block['as_of']})"


def section(rows: list[Mapping[str, Any]], edition: Mapping[str, Any]) -> list[str]:
    """Markdown lines for the card (empty when no erratum was applied)."""
    errata = edition.get("errata")
    if not errata:
        return []
    out = []
    for art in errata["applied"]:
        e = art["erratum"]
        out += [f"**CORRECTED by erratum {e['id']}: {e['note']} ({e['date']})**", ""]
    out += ["## Errata — changelog", ""]
    for art in errata["applied"]:
        e = art["erratum"]
        out.append(f"- {e['date']} · {e['ref']} (corrects plan {e['plan_digest']}, {e['edition']}): {e['note']}")
        out += [f"  - {describe(c, art['code'])}" for c in e["corrections"]]
    compared = comparison(errata["before"], rows)
    changed = sum(1 for c in compared if c["changed"])
    out += ["", f"### Re-published cells: old → new ({changed} of {len(compared)} changed)", "",
            "| workload | model | system | pass rate (old → new) | cost (old → new) | CPO (old → new) | changed |",
            "|---|---|---|---|---|---|---|"]
    for c in compared:
        old, new = _side(c["old"]), _side(c["new"])
        mark = "**CHANGED**" if c["changed"] else "no"
        out.append(f"| {c['workload']} | {model_label(c['model'])} | {c['system']} | {old[0]} → {new[0]} | {old[1]} → {new[1]} | "
                   f"{old[2]} → {new[2]} | {mark} |")
    return out + [""]
