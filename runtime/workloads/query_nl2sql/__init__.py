"""query.nl2sql (LedgerRate §4.6): answer finance questions by writing SQL over the books.

The package holds the four versioned components the workload spec pins: the seeded question
generator (15 questions of graded difficulty over the shared finance database), the
execution-match grading (row multisets on every seeded database variant, Decimal money),
the sandboxed SQL tools of the agentic system, and the reference models' behaviour.
"""
