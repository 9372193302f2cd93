"""A component module with a string constant that is not Unicode text (a lone surrogate)."""

COMPONENT_ID = "fixture.surrogate"
COMPONENT_VERSION = 1

MARKER = "\ud800"
