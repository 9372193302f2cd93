"""How a model is named wherever a report shows it.

The demo's reference candidates (`lrc/careful`, `lrc/cheap`: lrc.runtime.models.reference)
are deterministic stand-ins with *declared* prices. A reader who meets one of them on any line
-- a rate, a cell, a chart legend, a paired comparison, a failure example -- must not take it
for a commercial model or its cost for a quote, so the name always carries the label (issue 15
§1: "labelled 'demo model, demo price' on every line they appear"). The compiler lets only
these two embedded models take a scored role (LRC6011), so the label follows from the id.
"""

from __future__ import annotations

from lrc.runtime.models.reference import CANDIDATES, PROVIDER

DEMO_NOTE = "demo model, demo price"
DEMO_MODELS: frozenset[str] = frozenset(f"{PROVIDER}/{name}" for name in CANDIDATES)


def is_demo_model(model: str) -> bool:
    return model in DEMO_MODELS


def model_label(model: str) -> str:
    """`lrc/cheap [demo model, demo price]` for a reference candidate (brackets: the label
    often sits inside parentheses already); any other id as it is."""
    return f"{model} [{DEMO_NOTE}]" if model in DEMO_MODELS else model
