"""Human review of judged runs in an Excel workbook (seed §5.3, issue 12).

`lrc review export` samples, with the edition's seed, at least the edition's spot-check rate
of every cell's judged runs and writes them to an xlsx a finance reviewer grades without
seeing the model or the judge's verdict; `lrc review import` appends each human grade to the
journal as an `adjudication` record (the judge's record is never rewritten). From the journal
alone, `status.review_status` tells per cell whether its judged results are provisional,
how often the humans disagreed with the judge, and whether a manual regrade is required or done.

Modules, one job each: `rubric` (what a rubric asks and how a judgment is a verdict),
`sample` (which judgments a human sees), `layout` (what goes in which cell), `workbook`
(openpyxl: deterministic bytes, reading back, tamper checks), `importer` (grades ->
adjudication records), `status` (per-cell review state for the report), `cli` (the commands).
"""
