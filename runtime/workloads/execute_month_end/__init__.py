"""execute.month-end (LedgerRate §4.7, agentic only): run a mini month-end close.

The package holds the four versioned components the workload spec pins: the seeded close
generator (a company's books with the close month still open, plus the month's source
documents), the end-state grading (entries against the reference set, balance, trial
balance, writer seal), the sandboxed tools (SQL, file read, journal-entry writer onto the
run's own scratch ledger) and the reference models' behaviour.
"""
