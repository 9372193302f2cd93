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

from jinja2 import StrictUndefined, TemplateError, pass_context, pass_eval_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2 import nodes
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


BOUNDED_FILTERS = ("center", "format", "indent", "truncate", "wordwrap", "filesizeformat", "round", "slice", "batch")


def _too_large(what: str, size: int) -> None:
    if size > MAX_RENDER_CHARS:
        raise RenderTooLarge(f"{what} would make {size} characters or items, above the cap of {MAX_RENDER_CHARS}")


_CONTAINERS = (list, tuple, dict, set, frozenset)


def _members(value: Any) -> Any:
    return [m for pair in value.items() for m in pair] if isinstance(value, dict) else value


def _items(value: Any, seen: dict[int, int] | None = None) -> int:
    """Elements of a sequence, counted through nested containers (a string counts its length at
    the top and 1 inside a container, as `*` always counted). `[[1] * 400000] * 400000` is
    400000 items at the top but 1.6e11 once printed or summed; a shared inner container counts
    each time it occurs, from one visit (`seen`)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if not isinstance(value, _CONTAINERS):
        return 1
    seen = {} if seen is None else seen
    if id(value) not in seen:
        seen[id(value)] = 0  # a cycle (not buildable in the immutable sandbox) counts once
        seen[id(value)] = len(value) + sum(_items(m, seen) for m in _members(value) if isinstance(m, _CONTAINERS))
    return seen[id(value)]


def _text(value: Any, seen: dict[int, int]) -> int:
    if isinstance(value, (str, bytes)):
        return len(value) + 2  # quotes, once inside a container
    if isinstance(value, (int, float)):
        return len(str(value)) if isinstance(value, float) or abs(value) < 10**100 else 4300
    if not isinstance(value, _CONTAINERS):
        return 8
    if id(value) not in seen:
        seen[id(value)] = 0
        seen[id(value)] = 2 + sum(_text(m, seen) + 2 for m in _members(value))
    return seen[id(value)]


def text_size(value: Any) -> int:
    """About the length of `str(value)` (within a small factor: escapes), computed without building it: a string's length, a
    container's printed elements (shared inner containers counted each time they occur, from
    one visit each). What `{{ value }}`, `~` and the string filters would allocate in C."""
    if isinstance(value, (str, bytes)):
        return len(value)
    return _text(value, {})


def _predicted_str_method(method: Any, args: tuple, kwargs: dict) -> int | None:
    """The length of what a str/bytes method would return, for the methods whose result can
    outgrow their inputs (a width, a tab size, a replacement repeated per occurrence, a
    separator repeated per item); None for the others."""
    owner, name = method.__self__, method.__name__
    arg = (lambda i, key, default=None: args[i] if len(args) > i else kwargs.get(key, default))
    if name in ("ljust", "rjust", "center", "zfill"):
        width = arg(0, "width")
        return max(len(owner), width) if isinstance(width, int) else None
    if name == "expandtabs":
        tab = arg(0, "tabsize", 8)
        return len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * max(tab, 0) if isinstance(tab, int) else None
    if name == "replace":
        old, new, count = arg(0, "old"), arg(1, "new"), arg(2, "count", -1)
        if not (isinstance(old, type(owner)) and isinstance(new, type(owner)) and isinstance(count, int)):
            return None
        hits = owner.count(old) if old else len(owner) + 1
        return len(owner) + (min(hits, count) if count >= 0 else hits) * max(len(new) - len(old), 0)
    return None


STR_METHODS = ("center", "expandtabs", "join", "ljust", "replace", "rjust", "zfill")
"""str and bytes methods whose result size is predicted (and capped) before they run."""


def _sized_join(fn: Any) -> Any:
    """The join filter, refusing a result above MAX_RENDER_CHARS before joining."""

    @pass_eval_context
    def join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> Any:
        items = list(value)
        _too_large("join", sum(text_size(v) for v in items) + text_size(d) * max(len(items) - 1, 0))
        return fn(eval_ctx, items, d, attribute)

    return join


def _sized_replace(fn: Any) -> Any:
    @pass_eval_context
    def replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: Any = None) -> Any:
        _too_large("replace", text_size(s))
        text = str(s)
        _too_large("replace", _predicted_str_method(text.replace, (str(old), str(new), -1 if count is None else count), {}) or 0)
        return fn(eval_ctx, text, old, new, count)

    return replace


def _sized_sum(fn: Any) -> Any:
    """sum() of lists or strings concatenates them in C: predict the length first."""
    from jinja2.filters import make_attrgetter, pass_environment

    @pass_environment
    def total(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
        items = list(iterable if attribute is None else map(make_attrgetter(environment, attribute), iterable))
        if isinstance(start, (list, tuple, str)):
            _too_large("sum", _items(start) + sum(_items(v) for v in items))
        return fn(environment, items, None, start)

    return total


def _sized_text(name: str, fn: Any) -> Any:
    """A filter that prints its argument (string, tojson, pprint): refused before printing a
    value whose text would exceed MAX_RENDER_CHARS."""

    def sized(*args: Any, **kwargs: Any) -> Any:
        value = next((a for a in args if not _is_context(a)), None)
        indent = kwargs.get("indent", args[-1] if name == "tojson" and len(args) > 2 else None)
        factor = 1 + (indent if isinstance(indent, int) and not isinstance(indent, bool) and indent > 0 else 0)
        _too_large(name, text_size(value) * factor)
        return fn(*args, **kwargs)

    if hasattr(fn, "jinja_pass_arg"):
        sized.jinja_pass_arg = fn.jinja_pass_arg
    return sized


def _is_context(value: Any) -> bool:
    from jinja2.environment import Environment
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

    return isinstance(value, (Environment, EvalContext, Context))


SIZED_FILTERS = ("join", "replace", "sum", "string", "tojson", "pprint")
"""Filters whose result size is predicted from their input and refused above MAX_RENDER_CHARS."""


@pass_context
def _bounded_output(context: Any, value: Any) -> Any:
    """`finalize` of every `{{ ... }}`: a value whose text exceeds the cap is refused before
    str() builds it. Taking the context also keeps jinja from evaluating output expressions
    at compile time, where no deadline runs."""
    _too_large("output", text_size(value))
    return value


class BoundedCodeGenerator(CodeGenerator):
    """jinja2's code generator with `~` routed through `environment.bounded_concat`, which
    checks the joined length first (`ns.s ~ ns.s` in a loop doubles a string per step, in C)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


SETTINGS: dict[str, Any] = {
    "engine": "jinja2.sandbox.ImmutableSandboxedEnvironment",
    "undefined": "StrictUndefined",
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "bounded_binops": ["*", "**", "%", "+"],
    "bounded_filters": list(BOUNDED_FILTERS),
    "sized_filters": list(SIZED_FILTERS),
    "bounded_str_methods": list(STR_METHODS),
    "bounded_concat_and_output": True,
    "bounded_str_format": True,
    "constant_folding": False,
    "max_width": MAX_WIDTH,
    "removed": ["filters.random", "globals.lipsum", "globals.cycler", "globals.joiner"],
    "max_render_chars": MAX_RENDER_CHARS,
}


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus bounds on what allocates in C.

    The stock sandbox blocks attribute escapes but not resource use: `'a' * 10**9`,
    `'%09999999999d' % 1` or `'x' | indent(10**10)` would build gigabyte strings inside C,
    where neither an output cap nor a deadline can stop them. So `*`, `**`, `%`, `+`, `~`,
    str.format, the width-taking str methods and filters, and every `{{ ... }}` check their
    sizes first. Constant folding is off (`optimized=False`): jinja would otherwise run filters
    while compiling a template (`[1]|slice(30000000)|list`), before any deadline is set.
    """

    intercepted_binops = frozenset(["*", "**", "%", "+"])
    code_generator_class = BoundedCodeGenerator

    def bounded_concat(self, values: tuple) -> str:
        _too_large("`~`", sum(text_size(v) for v in values))
        return "".join(map(str, values))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja's signature
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, (str, bytes)) and getattr(__obj, "__name__", None) in STR_METHODS:
            if __obj.__name__ == "join" and args:
                items = list(args[0])
                _too_large("join", sum(len(v) if isinstance(v, type(owner)) else 0 for v in items) + len(owner) * max(len(items) - 1, 0))
                args = (items, *args[1:])
            else:
                try:
                    predicted = _predicted_str_method(__obj, args, kwargs)
                except (TypeError, ValueError):
                    predicted = None  # wrong arguments: the method itself says so
                if predicted is not None:
                    _too_large(f"str.{__obj.__name__}", predicted)
        return super().call(__context, __obj, *args, **kwargs)

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
                    if _items(seq) * count > MAX_RENDER_CHARS:
                        raise RenderTooLarge(f"template multiplication exceeds {MAX_RENDER_CHARS} items")
            return left * right
        if operator == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                if _items(left) + _items(right) > MAX_RENDER_CHARS:
                    raise RenderTooLarge(f"template addition exceeds {MAX_RENDER_CHARS} items")
            return left + right
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
        optimized=False,
        finalize=_bounded_output,
    )
    env.filters.pop("random", None)
    for name in BOUNDED_FILTERS:
        if name in env.filters:
            env.filters[name] = _bounded_filter(name, env.filters[name])
    env.filters["join"] = _sized_join(env.filters["join"])
    env.filters["replace"] = _sized_replace(env.filters["replace"])
    env.filters["sum"] = _sized_sum(env.filters["sum"])
    for name in ("string", "tojson", "pprint"):
        env.filters[name] = _sized_text(name, env.filters[name])
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
