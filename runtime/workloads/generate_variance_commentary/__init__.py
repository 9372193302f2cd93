"""generate.variance-commentary (LedgerRate §4.4): explain a month's budget-vs-actual in <= 300 words.

The package holds the versioned components the workload spec pins: the seeded month generator,
the hybrid grading (deterministic figure, driver and length checks, then the judge's rubric
scores), and the embedded reference models (oracle, note-copying baseline, and the
deterministic reference judge `lrc/judge`). Single-shot only, so there is no tools component.
"""
