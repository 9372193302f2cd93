"""A component module whose version is not an integer literal."""

COMPONENT_ID = "fixture.bad"
COMPONENT_VERSION = "1"
