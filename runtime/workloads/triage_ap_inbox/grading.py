"""Grading of triage.ap-inbox answers: tolerant normalization, then batch accuracy.

Why it is built this way:

- `normalize` forgives formatting, not judgement: a model that writes "Dunning Notice" or
  " PO response " meant a valid label, and failing it on spelling would measure JSON
  hygiene instead of triage. It uses cerberus normalization (coerce rules) so the tolerance
  is declared as a schema, and it never raises: an answer of the wrong shape is returned
  unchanged for the output-contract check to reject.
- `validate` scores the batch the way §4.2 states it (>= 19/20 correct) and refuses to be
  gamed: an email labelled twice counts as wrong even if one entry is right, a missing email
  is wrong, and labels for ids that are not in the batch earn nothing.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Mapping

import cerberus

from lrc.runtime.checks.results import ValidatorResult, result

COMPONENT_ID = "triage.ap-inbox.grading"
COMPONENT_VERSION = 2

LABEL_IDS: tuple[str, ...] = ("invoice", "statement", "dunning_notice", "po_response", "other")

BATCH_ACCURACY = "triage.ap-inbox.batch-accuracy"
EMAIL_LABEL = "triage.ap-inbox.email-label"


def _canon_label(value: Any) -> Any:
    """' Dunning Notice' -> 'dunning_notice', 'po-response' -> 'po_response'; non-strings unchanged.

    The spec's spelled-out label names ("dunning notice", "PO response") canonicalize to
    exactly the label ids, so no synonym table is needed (and none is wanted: tolerance
    of other words would be grading judgement, not formatting).
    """
    if not isinstance(value, str):
        return value
    return re.sub(r"_+", "_", re.sub(r"[\s\-]+", "_", value.strip().casefold())).strip("_")


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


_SCHEMA: dict[str, Any] = {
    "labels": {
        "type": "list",
        "schema": {
            "type": "dict",
            "schema": {"email_id": {"coerce": _strip}, "label": {"coerce": _canon_label}},
        },
    },
}


def _normalize_entries(answer: Mapping[str, Any]) -> dict[str, Any] | None:
    """What `_SCHEMA`'s cerberus normalization gives when every entry of `labels` is a dict (an
    answer parsed from JSON, the usual case), without building validators per answer: a deep
    copy whose entries' `email_id` and `label`, where present, are coerced in place. None for
    any other shape (cerberus decides those). `tests/test_throughput_fastpaths.py` holds it
    equal to cerberus."""
    labels = answer["labels"]
    if type(labels) is not list or not all(type(entry) is dict for entry in labels):
        return None
    out = copy.deepcopy(dict(answer))
    for entry in out["labels"]:
        if "email_id" in entry:
            entry["email_id"] = _strip(entry["email_id"])
        if "label" in entry:
            entry["label"] = _canon_label(entry["label"])
    return out


def _normalize_cerberus(answer: Mapping[str, Any]) -> Any:
    try:
        validator = cerberus.Validator(_SCHEMA, allow_unknown=True)
        out = validator.normalized(copy.deepcopy(dict(answer)), always_return_document=True)
    except Exception:  # noqa: BLE001 - normalization must never raise; the contract check decides
        return answer
    return out if isinstance(out, dict) else answer


def normalize(answer: Any) -> Any:
    """Canonicalize label spellings and email ids; anything unexpected comes back unchanged."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("labels"), list):
        return answer
    fast = _normalize_entries(answer)
    return fast if fast is not None else _normalize_cerberus(answer)


def validate(answer: Any, key: Mapping[str, Any], params: Mapping[str, Any]) -> list[ValidatorResult]:
    """One blocking batch-accuracy result plus an info result per wrong, missing or stray entry."""
    gold: Mapping[str, str] = key["labels"]
    total = len(gold)
    min_correct = int(params.get("min_correct", 19))
    entries = answer.get("labels", []) if isinstance(answer, Mapping) else []
    given: dict[str, list[str]] = {}
    unknown: dict[str, list[str]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        email_id, label = str(entry.get("email_id")), str(entry.get("label"))
        if email_id in gold:
            given.setdefault(email_id, []).append(label)
        else:
            unknown.setdefault(email_id, []).append(label)

    details: list[ValidatorResult] = []
    wrong: list[str] = []
    for email_id, expected in gold.items():
        labels = given.get(email_id, [])
        if len(labels) == 1 and labels[0] == expected:
            continue
        wrong.append(email_id)
        if not labels:
            observed, why = None, "no label was given"
        elif len(labels) > 1:
            observed, why = labels, f"it was labelled {len(labels)} times"
        else:
            observed, why = labels[0], f"it was labelled {labels[0]!r}"
        details.append(result(EMAIL_LABEL, COMPONENT_VERSION, "fail", severity="info", observed=observed,
                              expected=expected, location=email_id,
                              message=f"Email {email_id} should be {expected!r}, but {why}."))
    for email_id, labels in unknown.items():
        details.append(result(EMAIL_LABEL, COMPONENT_VERSION, "fail", severity="info", observed=labels,
                              expected="an email id of this batch", location=email_id,
                              message=f"Entry for unknown email id {email_id!r} was ignored."))

    correct = total - len(wrong)
    ok = correct >= min_correct
    message = f"{correct} of {total} emails labelled correctly; at least {min_correct} needed."
    if wrong:
        message += f" Wrong or missing: {', '.join(wrong)}."
    if unknown:
        message += f" Ignored {len(unknown)} entr{'y' if len(unknown) == 1 else 'ies'} for unknown ids."
    summary = result(BATCH_ACCURACY, COMPONENT_VERSION, "pass" if ok else "fail", severity="error",
                     observed=f"{correct}/{total} correct", expected=f">= {min_correct}/{total} correct",
                     location=wrong, message=message)
    return [summary, *details]
