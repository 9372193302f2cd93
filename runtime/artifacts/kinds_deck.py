"""Deck task kinds: refresh a chart or a commentary from the model, restore a required slide.

Why: a board deck goes stale one object at a time, and the shortcuts an agent takes are
visible only on the objects themselves — a chart pasted back as a picture, a figure retyped
in another format, a slide rebuilt without its chart. Every kind here starts from the deck
`deck.build` makes of the *current* model and makes one part of it stale or absent, so the
region is exactly that part (fa.unchanged-outside) and the rest must survive untouched.

| kind | the agent receives | it must | region | baseline |
|---|---|---|---|---|
| refresh-deck-chart | model.xlsx after a credit note in the last quarter; deck.pptx whose table is current but whose chart is not | refresh the chart's data from the model, keeping it an editable chart with its data range | slide 3's chart | refreshes revenue, leaves gross profit stale |
| refresh-deck-text | model.xlsx after revenue was reclassified between the first and last quarter; deck.pptx whose commentary quotes the old figures | update the commentary's figures | slide 4's body text | updates the last quarter's figure only |
| add-required-slide | model.xlsx; deck.pptx without its revenue-and-gross-profit slide | add the slide back as slide 3 (Title Only layout, an editable clustered column chart of the model's revenue and gross profit) | the new slide | adds the slide with a picture of a chart |
"""

from __future__ import annotations

import io
from typing import Any, Callable

from lrc.runtime.artifacts import deck, model
from lrc.runtime.artifacts.deterministic import presentation_bytes, workbook_bytes
from lrc.runtime.artifacts.task_common import DECK, MODEL, Task, label, load_deck
from lrc.runtime.checks.rng import Stream

BODY_SHAPE = "Content Placeholder 2"  # python-pptx's name for the "Title and Content" body
SERIES = [{"label": text, "sheet": sheet, "row": label(sheet, row)} for text, sheet, row in deck.CHART_SERIES]


def required_slides() -> dict[str, Any]:
    return {"validator": "fa.required-parts", "params": {"file": DECK, "slides": [
        {"title": deck.SLIDE_TITLES[0]},
        {"title": deck.SLIDE_TITLES[1], "objects": [{"shape": deck.TABLE_SHAPE}]},
        {"title": deck.SLIDE_TITLES[2], "objects": [{"shape": deck.CHART_SHAPE}]},
        {"title": deck.SLIDE_TITLES[3]}]}}


def _checks(tie: dict[str, Any], region: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [required_slides(),
            {"validator": "fa.summary-ties", "params": {"file": DECK, "model_file": MODEL, **tie}},
            {"validator": "fa.preservation", "params": {"file": DECK}},
            {"validator": "fa.unchanged-outside", "params": {"file": DECK, "region": region}}]


def _deck(a: model.Assumptions):
    return deck.build(a, model.reference_values(a))


def _chart(prs):
    return next(s for s in prs.slides[2].shapes if s.name == deck.CHART_SHAPE).chart


def chart_data(a: model.Assumptions, stale: model.Assumptions | None = None, stale_series: tuple[str, ...] = ()):
    """The chart's data from `a`, the series in `stale_series` taken from `stale` instead."""
    from pptx.chart.data import CategoryChartData

    data = CategoryChartData(number_format="#,##0.00")
    data.categories = list(a.periods)
    for text, sheet, row in deck.CHART_SERIES:
        source = stale if text in stale_series else a
        values = model.reference_values(source)
        data.add_series(text, [values[(sheet, f"{model.col(j)}{row}")].quantize(model.CENT) for j in range(len(a.periods))])
    return data


def refresh_deck_chart(seed: str) -> Task:
    before = model.assumptions(seed, 4)
    credit = Stream(seed, "artifacts.kinds_deck", "refresh-deck-chart").money(2_000, 6_000)
    after = model.with_input(before, "revenue", 3, before.inputs["revenue"][3] - credit)
    names = tuple(text for text, _, _ in deck.CHART_SERIES)
    decks = []
    for stale in (names, names[1:]):
        prs = _deck(after)
        _chart(prs).replace_data(chart_data(after, before, stale))
        decks.append(presentation_bytes(prs))
    checks = _checks({"slide": 3, "shape": deck.CHART_SHAPE, "series": SERIES}, [{"slide": 3, "shape": deck.CHART_SHAPE}])
    return Task("refresh-deck-chart", seed,
                f"A credit note reduced {after.periods[3]} revenue after the board deck was made; the key-figures table "
                "was refreshed but the revenue chart was not. Refresh the chart's data from the model so every point "
                "matches it; keep it an editable chart with the same data range, and change nothing else in the deck.",
                {MODEL: workbook_bytes(model.build(after)), DECK: decks[0]}, DECK, presentation_bytes(_deck(after)), checks,
                decks[1])


def _commentary(prs, a: model.Assumptions, b: model.Assumptions) -> None:
    """Slide 4's first paragraph as `deck.build` writes it, first figure from `a`, last from `b`."""
    first = model.reference_values(a)[("IS", f"{model.col(0)}4")]
    last = model.reference_values(b)[("IS", f"{model.col(len(b.periods) - 1)}4")]
    body = next(s for s in prs.slides[3].shapes if s.name == BODY_SHAPE).text_frame
    body.paragraphs[0].runs[0].text = (f"Revenue moved from {deck.figure_text(first)} in {a.periods[0]} to "
                                       f"{deck.figure_text(last)} in {a.periods[-1]}.")


def refresh_deck_text(seed: str) -> Task:
    before = model.assumptions(seed, 4)
    moved = Stream(seed, "artifacts.kinds_deck", "refresh-deck-text").money(1_000, 4_000)
    after = model.with_input(before, "revenue", 0, before.inputs["revenue"][0] - moved)
    after = model.with_input(after, "revenue", 3, after.inputs["revenue"][3] + moved)
    decks = []
    for first, last in ((before, before), (before, after)):
        prs = _deck(after)
        _commentary(prs, first, last)
        decks.append(presentation_bytes(prs))
    figures = [{"sheet": "IS", "row": "Revenue", "period": after.periods[j]} for j in (0, 3)]
    checks = _checks({"slide": 4, "shape": BODY_SHAPE, "figures": figures}, [{"slide": 4, "shape": BODY_SHAPE}])
    return Task("refresh-deck-text", seed,
                f"Revenue was reclassified between {after.periods[0]} and {after.periods[3]} after the deck was written. "
                "The table and chart are current, but the commentary on the last slide still quotes the old revenue "
                "figures. Update the figures it quotes to the model's, in the deck's number format, and change nothing else.",
                {MODEL: workbook_bytes(model.build(after)), DECK: decks[0]}, DECK, presentation_bytes(_deck(after)), checks,
                decks[1])


def _without_slide(prs, index: int):
    ids = prs.slides._sldIdLst
    entry = list(ids)[index]
    prs.part.drop_rel(entry.rId)
    ids.remove(entry)
    return prs


def _picture_slide(data: bytes, a: model.Assumptions) -> bytes:
    """The baseline: the slide re-added at position 3 with a picture where the chart belongs."""
    from PIL import Image

    prs = load_deck(data)
    layouts = {layout.name: layout for layout in prs.slide_layouts}
    slide = prs.slides.add_slide(layouts["Title Only"])
    slide.shapes.title.text = deck.SLIDE_TITLES[2]
    png = io.BytesIO()
    Image.new("RGB", (8, 6), (40, 90, 160)).save(png, format="PNG")
    png.seek(0)
    from pptx.util import Inches

    picture = slide.shapes.add_picture(png, Inches(0.8), Inches(1.5), Inches(11.7), Inches(5.4))
    picture.name = deck.CHART_SHAPE
    ids = prs.slides._sldIdLst
    entry = list(ids)[-1]
    ids.remove(entry)
    ids.insert(2, entry)
    return presentation_bytes(prs)


def add_required_slide(seed: str) -> Task:
    a = model.assumptions(seed, 4)
    given = presentation_bytes(_without_slide(_deck(a), 2))
    checks = _checks({"slide": 3, "shape": deck.CHART_SHAPE, "series": SERIES}, [{"new_slide": deck.SLIDE_TITLES[2]}])
    return Task("add-required-slide", seed,
                f"The board deck has lost its slide \"{deck.SLIDE_TITLES[2]}\". Add it back as slide 3 with "
                f"the Title Only layout, the title \"{deck.SLIDE_TITLES[2]}\" and an editable clustered column "
                f"chart named \"{deck.CHART_SHAPE}\" of revenue and gross profit per quarter from the model. Change no "
                "other slide.",
                {MODEL: workbook_bytes(model.build(a)), DECK: given}, DECK, presentation_bytes(_deck(a)), checks,
                _picture_slide(given, a))


MAKERS: dict[str, Callable[[str], Task]] = {
    "refresh-deck-chart": refresh_deck_chart, "refresh-deck-text": refresh_deck_text, "add-required-slide": add_required_slide,
}
