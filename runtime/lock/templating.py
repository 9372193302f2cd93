"""The one jinja2 configuration used to render prompts, at compile time and at run time.

Templates come from pull requests, so they are untrusted: an immutable sandbox, strict
undefined variables, no random or clock helpers, pinned whitespace settings, and caps on
output size. The settings are recorded in the lock (`SETTINGS`) so a change of them is a
change of the plan.
"""

from __future__ import annotations

from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_RENDER_CHARS = 400_000
"""A rendered prompt larger than this is refused (a template can multiply strings)."""

SETTINGS: dict[str, Any] = {
    "engine": "jinja2.sandbox.ImmutableSandboxedEnvironment",
    "undefined": "StrictUndefined",
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "bounded_binops": ["*", "**"],
    "removed": ["filters.random", "globals.lipsum", "globals.cycler", "globals.joiner"],
    "max_render_chars": MAX_RENDER_CHARS,
}


class RenderTooLarge(TemplateError):
    """The rendered text exceeds MAX_RENDER_CHARS."""


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus bounds on `*` and `**`.

    The stock sandbox blocks attribute escapes but not resource use: `'a' * 10**9` would
    build a gigabyte string before any output cap could see it.
    """

    intercepted_binops = frozenset(["*", "**"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, int) and abs(right) > 64:
                raise RenderTooLarge("exponent too large in template")
            return left**right
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    if len(seq) * count > MAX_RENDER_CHARS:
                        raise RenderTooLarge(f"template multiplication exceeds {MAX_RENDER_CHARS} items")
            return left * right
        return super().call_binop(context, operator, left, right)


def make_environment() -> ImmutableSandboxedEnvironment:
    """A fresh sandboxed environment with the locked settings."""
    env = _BoundedSandbox(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=0,
    )
    env.filters.pop("random", None)
    for name in ("lipsum", "cycler", "joiner"):
        env.globals.pop(name, None)
    return env


def render(source: str, context: Mapping[str, Any]) -> str:
    """Render template text with `context`; raises jinja2 errors or RenderTooLarge."""
    env = make_environment()
    template = env.from_string(source)
    chunks: list[str] = []
    size = 0
    for chunk in template.generate(**context):
        size += len(chunk)
        if size > MAX_RENDER_CHARS:
            raise RenderTooLarge(f"rendered prompt exceeds {MAX_RENDER_CHARS} characters")
        chunks.append(chunk)
    return "".join(chunks)
