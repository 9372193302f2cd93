"""Aggregation, metrics and the artifacts a run leaves behind (cells, rate card, traces)."""
