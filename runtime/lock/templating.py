"""The one jinja2 configuration used to render prompts, at compile time and at run time.

Templates come from pull requests, so they are untrusted: an immutable sandbox, strict
undefined variables, no random or clock helpers, pinned whitespace settings, and caps on
output size. The settings are recorded in the lock (`SETTINGS`) so a change of them is a
change of the plan.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_RENDER_CHARS = 400_000
"""A rendered prompt larger than this is refused (a template can multiply strings)."""



class RenderTooLarge(TemplateError):
    """The rendered text exceeds MAX_RENDER_CHARS."""


MAX_WIDTH = 10_000
"""Largest width, padding or precision a template may ask of a formatter or filter."""

_PRINTF = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_FIELD = re.compile(r"\{[^{}]*\}")


def _check_printf(fmt: str) -> None:
    for match in _PRINTF.finditer(fmt):
        for group in match.groups():
            if group == "*" or (group is not None and len(group) > 6) or (group is not None and int(group) > MAX_WIDTH):
                raise RenderTooLarge(f"format width or precision above {MAX_WIDTH} in template")


_NESTED_FIELD = re.compile(r"\{[^{}]+\{")


def _check_format_fields(fmt: str) -> None:
    if _NESTED_FIELD.search(fmt):  # '{x:{w}}': a width chosen at render time cannot be checked here
        raise RenderTooLarge("nested format fields are not allowed in templates")
    for field in _FORMAT_FIELD.findall(fmt):
        spec = field.split(":", 1)[1] if ":" in field else ""
        if "{" in spec or any(len(n) > 6 or int(n) > MAX_WIDTH for n in re.findall(r"\d+", spec)):
            raise RenderTooLarge(f"format width or precision above {MAX_WIDTH} in template")


def _bounded_filter(name: str, fn: Any) -> Any:
    """A filter whose integer arguments (widths, lengths) are capped; C code cannot be interrupted."""

    def bounded(*args: Any, **kwargs: Any) -> Any:
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > MAX_WIDTH:
                raise RenderTooLarge(f"{name} argument above {MAX_WIDTH} in template")
        if name == "format" and args and isinstance(args[0], str):
            _check_printf(args[0])
        return fn(*args, **kwargs)

    if hasattr(fn, "jinja_pass_arg"):
        bounded.jinja_pass_arg = fn.jinja_pass_arg  # keep pass_environment / pass_context
    return bounded


BOUNDED_FILTERS = ("center", "format", "indent", "truncate", "wordwrap", "filesizeformat", "round")


SETTINGS: dict[str, Any] = {
    "engine": "jinja2.sandbox.ImmutableSandboxedEnvironment",
    "undefined": "StrictUndefined",
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "bounded_binops": ["*", "**", "%"],
    "bounded_filters": list(BOUNDED_FILTERS),
    "bounded_str_format": True,
    "max_width": MAX_WIDTH,
    "removed": ["filters.random", "globals.lipsum", "globals.cycler", "globals.joiner"],
    "max_render_chars": MAX_RENDER_CHARS,
}


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus bounds on what allocates in C.

    The stock sandbox blocks attribute escapes but not resource use: `'a' * 10**9`,
    `'%09999999999d' % 1` or `'x' | indent(10**10)` would build gigabyte strings inside C,
    where neither an output cap nor a deadline can stop them. So `*`, `**`, `%`, str.format
    and the width-taking filters check their sizes first.
    """

    intercepted_binops = frozenset(["*", "**", "%"])

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        template = getattr(value, "__self__", "")

        def checked(*args: Any, **kwargs: Any) -> str:
            if isinstance(template, str):
                _check_format_fields(template)
            return wrapped(*args, **kwargs)

        return checked

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "%":
            if isinstance(left, str):
                _check_printf(left)
            return left % right
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
    for name in BOUNDED_FILTERS:
        if name in env.filters:
            env.filters[name] = _bounded_filter(name, env.filters[name])
    for name in ("lipsum", "cycler", "joiner"):
        env.globals.pop(name, None)
    return env


COMPILED_CACHE_SIZE = 512
"""Compiled templates kept per process (a plan has a few per workload and system)."""

_compiled: dict[str, Any] = {}
_compiled_lock = threading.Lock()


def compiled(source: str) -> Any:
    """The template of `source`, compiled once per process in its own `make_environment()`.

    A locked template is rendered once per run (thousands of times per plan): parsing and
    compiling it each time was ~30% of an execute. The cache is keyed by the template text
    itself, so two texts never share a template; the environment, its sandbox and its limits
    are exactly those of an uncached render (nothing in a compiled template depends on the
    context it is rendered with). A template that does not compile is never cached: its
    TemplateSyntaxError (with its line) is raised on every use. Oldest entries are dropped
    beyond COMPILED_CACHE_SIZE."""
    template = _compiled.get(source)
    if template is None:
        template = make_environment().from_string(source)
        with _compiled_lock:
            if len(_compiled) >= COMPILED_CACHE_SIZE:
                _compiled.pop(next(iter(_compiled)))
            template = _compiled.setdefault(source, template)
    return template


def render(source: str, context: Mapping[str, Any], *, template: Any = None) -> str:
    """Render template text with `context`; raises jinja2 errors or RenderTooLarge.

    The template is compiled once per process (`compiled`); the compiler, which has already
    compiled `source` in a `make_environment()` for its static checks, passes that `template`."""
    if template is None:
        template = compiled(source)
    chunks: list[str] = []
    size = 0
    for chunk in template.generate(**context):
        size += len(chunk)
        if size > MAX_RENDER_CHARS:
            raise RenderTooLarge(f"rendered prompt exceeds {MAX_RENDER_CHARS} characters")
        chunks.append(chunk)
    return "".join(chunks)
