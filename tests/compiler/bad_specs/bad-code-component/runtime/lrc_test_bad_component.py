"""A component module that declares its id but no version."""

COMPONENT_ID = "fixture.bad"
