"""Stage 4: compile every prompt template and render its published sample.

Templates see exactly two variables: `task` (the workload's constants) and `item` (one
dataset item). Anything else is an error before rendering. The sample render uses the
workload's `sample_item`, so reviewers read the prompt as a model will, and the lock
carries both the template (what the runtime renders per item) and the sample.
"""

from __future__ import annotations

import json
import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from jinja2 import Template, TemplateError, TemplateSyntaxError, UndefinedError, nodes
from jinja2.exceptions import SecurityError

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import SURROGATE
from lrc.compiler.resolve import PROMPT_ROLES, Spec
from lrc.runtime.lock.canonical import digest_text
from lrc.runtime.lock.templating import MAX_RENDER_CHARS, BoundedCodeGenerator, RenderTooLarge, make_environment, render

CONTEXT_VARIABLES = ("item", "task")
RENDER_SECONDS = 2


class RenderTimeout(Exception):
    pass


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Bound render time on the main thread (the sandbox bounds attributes, not CPU)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def _fire(signum, frame):  # pragma: no cover - exercised by the hostile-template test
        raise RenderTimeout()

    old = signal.signal(signal.SIGALRM, _fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def answer_leaks(sample_answer: Any, given: Any, rendered: str, min_len: int = 3) -> list[str]:
    """Values of the expected answer that are not given in the input, yet appear in a prompt."""
    given_text = json.dumps(given, ensure_ascii=False)
    return sorted({leaf for leaf in _leaves(sample_answer)
                   if len(leaf) >= min_len and leaf not in given_text and leaf in rendered})


def render_workload(spec: Spec, diags: Diagnostics) -> dict[str, dict[str, dict[str, Any]]]:
    """system -> role -> {template, template_digest, sample, sample_digest}."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    context = {"task": spec.data["task"], "item": spec.data["sample_item"]}
    env = make_environment()
    for system_key, use in sorted(spec.normalized["systems"].items()):
        for role in PROMPT_ROLES:
            if role not in use["prompts"]:
                continue
            pointer = f"/systems/{system_key}/prompts/{role}"
            source = use["prompts"][role]
            relpath = spec.files.get(pointer)
            if relpath is None:  # the file itself failed to load; already reported
                continue
            where = {"path": relpath, "pointer": None}
            sample = _checked_render(env, spec, source, context, relpath, where, pointer, diags)
            if sample is None:
                continue
            if "sample_answer" in spec.data:
                leaks = answer_leaks(spec.data["sample_answer"], context, sample)
                if leaks:
                    diags.error("LRC6106", f"the rendered sample prompt contains expected answer value(s): {', '.join(repr(v) for v in leaks[:5])}",
                                **where, notes=(f"used by {spec.ref} at {pointer}",),
                                hint="a prompt may show the input, never the answer (seed 000, inclusion rule 5)")
                    continue
            out.setdefault(system_key, {})[role] = {
                "template": source,
                "template_digest": digest_text("prompt-template", source),
                "sample": sample,
                "sample_digest": digest_text("prompt-sample", sample),
            }
    return out


class _TrackingGenerator(BoundedCodeGenerator):
    """The sandbox's code generator (the one `make_environment()` compiles with) that also
    records the names a template reads from its context: what
    `jinja2.meta.find_undeclared_variables` computes, taken from the one code-generation pass
    the template needs anyway instead of a second, output-less one."""

    def __init__(self, environment) -> None:
        super().__init__(environment, None, "<template>", None, False, environment.optimized)
        self.undeclared_identifiers: set[str] = set()

    def enter_frame(self, frame) -> None:
        super().enter_frame(frame)
        for _, (action, param) in frame.symbols.loads.items():
            if action == "resolve" and param not in self.environment.globals:
                self.undeclared_identifiers.add(param)


def _compile(env, parsed) -> tuple[Template, set[str]]:
    """The template `env.from_string` would build from `parsed`, and its undeclared names."""
    generator = _TrackingGenerator(env)
    generator.visit(parsed)
    code = compile(generator.stream.getvalue(), "<template>", "exec")
    return env.template_class.from_code(env, code, env.make_globals(None), None), generator.undeclared_identifiers


def _template_line(exc: BaseException) -> int | None:
    """The template line an exception was raised at, where jinja knows it: the innermost frame
    of the template's code in the traceback (jinja rewrites those frames to template lines), or
    the line a TemplateSyntaxError/TemplateAssertionError carries."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None:
        line = getattr(exc, "lineno", None)
    return line if isinstance(line, int) and line >= 1 else None


def _name_line(parsed, names: list[str]) -> int | None:
    """The first line that reads one of `names` from the context."""
    lines = [n.lineno for n in parsed.find_all(nodes.Name) if n.ctx == "load" and n.name in names and n.lineno]
    return min(lines) if lines else None


def _overflow_line(template: Template, context: dict[str, Any]) -> int | None:
    """The template line whose output crossed MAX_RENDER_CHARS (the size cap counts the output
    the template yields, so the line is the one the top-level render function was at)."""
    gen = template.root_render_func(template.new_context(dict(context)))
    size = 0
    try:
        for chunk in gen:
            size += len(chunk)
            if size > MAX_RENDER_CHARS:
                frame = gen.gi_frame
                return template.get_corresponding_lineno(frame.f_lineno) if frame is not None else None
    except Exception:  # noqa: BLE001 - only a position is sought; the error itself was reported
        return None
    finally:
        gen.close()
    return None


def _at(where: dict, line: int | None) -> dict:
    return {**where, "line": line, "column": 1} if line else where


def _checked_render(env, spec: Spec, source: str, context: dict[str, Any], relpath: str, where: dict, pointer: str,
                    diags: Diagnostics) -> str | None:
    """Static checks, then the sample render under a deadline; None (and a diagnostic) on failure.
    Each diagnostic names the template line wherever jinja knows it."""
    try:
        parsed = env.parse(source)
    except TemplateSyntaxError as exc:
        diags.error("LRC4001", f"template syntax error: {exc.message}", path=relpath, line=exc.lineno, column=1,
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except (RecursionError, MemoryError):  # jinja's parser recurses per nesting level: ((((...)))) x 100
        diags.error("LRC4001", "template nests too deeply to parse", path=relpath,
                    hint="flatten the expression (fewer nested parentheses, brackets or blocks)",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    try:
        template, undeclared = _compile(env, parsed)
        unknown = sorted(undeclared - set(CONTEXT_VARIABLES))
    except TemplateError as exc:  # e.g. a filter the sandbox removed (random)
        diags.error("LRC4001", f"template error: {exc.message or exc}", **_at(where, _template_line(exc)),
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except (RecursionError, MemoryError):  # code generation and Python's compile() recurse per level too
        diags.error("LRC4001", "template nests too deeply to compile", path=relpath,
                    hint="flatten the expression (fewer nested parentheses, brackets or blocks)",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    if unknown:
        diags.error("LRC4002", f"template uses undefined variable(s): {', '.join(unknown)}", **_at(where, _name_line(parsed, unknown)),
                    hint="templates see only `task` (the workload's task block) and `item` (one dataset item)",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    try:
        with _deadline(RENDER_SECONDS):
            sample = render(source, context, template=template)
    except UndefinedError as exc:
        diags.error("LRC4002", f"sample render failed: {exc.message}", **_at(where, _template_line(exc)),
                    hint="the template reads a field that `task` or `sample_item` does not have",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except SecurityError as exc:
        diags.error("LRC4003", f"template not allowed: {exc}", **_at(where, _template_line(exc)), notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except RenderTooLarge as exc:
        line = _template_line(exc)
        if line is None:
            with _deadline(RENDER_SECONDS):
                try:
                    line = _overflow_line(template, context)
                except RenderTimeout:
                    line = None
        diags.error("LRC4004", str(exc), **_at(where, line), notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except RenderTimeout as exc:
        diags.error("LRC4004", f"template took more than {RENDER_SECONDS}s to render", **_at(where, _template_line(exc)),
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except MemoryError:  # a size the sandbox cannot predict; never a traceback
        diags.error("LRC4004", "template ran out of memory while rendering", **where,
                    hint=f"a prompt is at most {MAX_RENDER_CHARS} characters; build smaller intermediate values",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except (TemplateError, TypeError, ValueError, ArithmeticError, AttributeError, IndexError, KeyError, RecursionError) as exc:
        diags.error("LRC4001", f"template failed to render: {type(exc).__name__}: {exc}", **_at(where, _template_line(exc)),
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    if SURROGATE.search(sample):
        diags.error("LRC4001", "template rendered a lone surrogate (e.g. from \"\\ud800\"), which is not a Unicode character",
                    **where, notes=(f"used by {spec.ref} at {pointer}",))
        return None
    return sample
