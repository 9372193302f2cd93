"""triage.ap-inbox (LedgerRate §4.2): sort batches of 20 AP-inbox emails into five labels.

The package holds the four versioned components the workload spec pins: the seeded batch
generator, the batch-accuracy grading, the read-only inbox tools for the agentic system, and
the behaviour of the embedded reference models (oracle and keyword baseline).
"""
