"""extract.invoice (LedgerRate §4.1): key synthetic invoice PDFs into a published JSON schema.

The package holds the four versioned components the workload spec pins: the seeded PDF
generator (four layout families, planted edge cases), the field-by-field grading with the
normalization rules the spec declares, the read-only document tools for the agentic
system, and the behaviour of the embedded reference models (oracle and regex baseline).
"""
