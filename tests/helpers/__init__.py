"""Test helpers: a local OpenAI-compatible stub server and temporary lrc projects."""
