"""reconcile.ledger (LedgerRate §4.3): reconcile a month's bank feed against the GL cash account.

The package holds the four versioned components the workload spec pins: the seeded month
generator (200 bank transactions, a GL cash extract, exactly 12 planted discrepancies and
realistic noise that is not a discrepancy), the one-to-one discrepancy matching, the
read-only query tools for the agentic system, and the behaviour of the embedded reference
models (oracle and exact-match baseline).
"""
