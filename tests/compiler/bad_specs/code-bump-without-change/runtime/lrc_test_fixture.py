"""A code component that exists only in the compiler tests' bad-spec corpus."""

COMPONENT_ID = "fixture.component"
COMPONENT_VERSION = 2
