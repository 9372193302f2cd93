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

from jinja2 import Template, TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError

from lrc.compiler.diagnostics import Diagnostics
from lrc.compiler.load import SURROGATE
from lrc.compiler.resolve import PROMPT_ROLES, Spec
from lrc.runtime.lock.canonical import digest_text
from lrc.runtime.lock.templating import RenderTooLarge, make_environment, render

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


class _TrackingGenerator(CodeGenerator):
    """jinja2's code generator that also records the names a template reads from its context:
    what `jinja2.meta.find_undeclared_variables` computes, taken from the one code-generation
    pass the template needs anyway instead of a second, output-less one."""

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


def _checked_render(env, spec: Spec, source: str, context: dict[str, Any], relpath: str, where: dict, pointer: str,
                    diags: Diagnostics) -> str | None:
    """Static checks, then the sample render under a deadline; None (and a diagnostic) on failure."""
    try:
        parsed = env.parse(source)
    except TemplateSyntaxError as exc:
        diags.error("LRC4001", f"template syntax error: {exc.message}", path=relpath, line=exc.lineno, column=1,
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    try:
        template, undeclared = _compile(env, parsed)
        unknown = sorted(undeclared - set(CONTEXT_VARIABLES))
    except TemplateError as exc:  # e.g. a filter the sandbox removed (random)
        diags.error("LRC4001", f"template error: {exc.message or exc}", **where, notes=(f"used by {spec.ref} at {pointer}",))
        return None
    if unknown:
        diags.error("LRC4002", f"template uses undefined variable(s): {', '.join(unknown)}", **where,
                    hint="templates see only `task` (the workload's task block) and `item` (one dataset item)",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    try:
        with _deadline(RENDER_SECONDS):
            sample = render(source, context, template=template)
    except UndefinedError as exc:
        diags.error("LRC4002", f"sample render failed: {exc.message}", **where,
                    hint="the template reads a field that `task` or `sample_item` does not have",
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except SecurityError as exc:
        diags.error("LRC4003", f"template not allowed: {exc}", **where, notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except RenderTooLarge as exc:
        diags.error("LRC4004", str(exc), **where, notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except RenderTimeout:
        diags.error("LRC4004", f"template took more than {RENDER_SECONDS}s to render", **where,
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    except (TemplateError, TypeError, ValueError, ArithmeticError, AttributeError, IndexError, KeyError, RecursionError) as exc:
        diags.error("LRC4001", f"template failed to render: {type(exc).__name__}: {exc}", **where,
                    notes=(f"used by {spec.ref} at {pointer}",))
        return None
    if SURROGATE.search(sample):
        diags.error("LRC4001", "template rendered a lone surrogate (e.g. from \"\\ud800\"), which is not a Unicode character",
                    **where, notes=(f"used by {spec.ref} at {pointer}",))
        return None
    return sample
