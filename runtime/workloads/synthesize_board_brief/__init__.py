"""synthesize.board-brief (LedgerRate §4.5): turn a five-document board pack into a one-page brief.

The package holds the versioned components the workload spec pins: the seeded board-pack
generator (five PDFs, about 40 pages, 20 planted key facts in a hidden checklist), the
deterministic grading (no fabricated figures, length limit) with the judge material and the
judge-result rule, and the embedded reference models (oracle, heuristic baseline, and the
deterministic reference judge).
"""
