"""Issue 11 §4, throughput and CPU: the classes of per-run waste, tested by what they do, not by timing.

- each locked template is compiled once per plan, however many runs render it;
- the journal commits in groups off the event loop, and a run counts as done only once its
  line was fsync'd (kill and disk-full mid-batch: acknowledged runs survive, nothing half-written);
- the provider's latency and the wait for a concurrency slot are journaled apart;
- `lrc report` and a resume with nothing to do never import litellm;
- benchmarks/throughput.py runs (--quick, slow).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lrc.runtime.lock import templating

REPO = Path(__file__).resolve().parent.parent


# -- templates: compiled once per plan ----------------------------------------------------------

@pytest.fixture
def count_compiles(monkeypatch):
    calls: list[str] = []
    original = templating._BoundedSandbox.from_string

    def counting(self, source, *args, **kwargs):
        calls.append(source)
        return original(self, source, *args, **kwargs)

    monkeypatch.setattr(templating._BoundedSandbox, "from_string", counting)
    monkeypatch.setattr(templating, "_compiled", {})
    return calls


@pytest.mark.parametrize("renders", [1, 50, 2100])
def test_each_template_is_compiled_once_however_many_renders(count_compiles, renders):
    sources = ["System: {{ task.name }}\n", "User: {% for e in item.emails %}{{ e }};{% endfor %}\n"]
    outs = set()
    for i in range(renders):
        for source in sources:
            outs.add(templating.render(source, {"task": {"name": f"t{i % 3}"}, "item": {"emails": [i, i + 1]}}))
    assert sorted(count_compiles) == sorted(sources)  # one compile per distinct text
    assert len(outs) == min(renders, 3) + renders  # every render used its own context


def test_the_demo_plans_prompts_compile_once_per_template(count_compiles):
    """The real path: render_messages over every item of every workload of the demo lock."""
    from lrc.runtime import items as item_gen
    from lrc.runtime.execute import load_verified, render_messages, resolve_seed

    plan = load_verified(REPO / "generated" / "demo" / "plan.lock")["plan"]
    items = item_gen.generate(plan, resolve_seed(plan, None))
    renders = 0
    templates = set()
    for wref, workload in plan["workloads"].items():
        for system, prompts in workload["prompts"].items():
            for model in plan["models"].values():
                for item in items[wref]:
                    messages = render_messages(workload, system, item, model)
                    renders += len(messages)
            templates.update(p["template"] for p in prompts.values())
    assert renders > 10 * len(templates)
    assert len(count_compiles) == len(set(count_compiles)) <= len(templates)


def test_a_cached_template_keeps_the_sandbox_and_its_limits(count_compiles):
    big = "{{ 'x' * n }}"
    assert templating.render(big, {"n": 3}) == "xxx"
    for _ in range(3):  # the cached template still refuses, every time
        with pytest.raises(templating.RenderTooLarge):
            templating.render(big, {"n": templating.MAX_RENDER_CHARS + 1})
    from jinja2.exceptions import SecurityError, UndefinedError

    escape = "{{ ''.__class__.__mro__ }}"
    for _ in range(2):
        with pytest.raises(SecurityError):
            templating.render(escape, {})
    with pytest.raises(UndefinedError):
        templating.render("{{ missing }}", {})
    assert len(count_compiles) == 3


@pytest.mark.parametrize("source,line", [("{% if %}", 1), ("ok\nok\n{{ x ", 3), ("a\n{% for x in y %}\nb\n", 3)])
def test_a_template_that_does_not_compile_is_reported_with_its_line_every_time(count_compiles, source, line):
    from jinja2 import TemplateSyntaxError

    for _ in range(3):
        with pytest.raises(TemplateSyntaxError) as err:
            templating.render(source, {"x": 1, "y": []})
        assert err.value.lineno == line
    assert len(count_compiles) == 3  # a failure is never cached as a template
    assert source not in templating._compiled


def test_the_cache_is_bounded(count_compiles, monkeypatch):
    monkeypatch.setattr(templating, "COMPILED_CACHE_SIZE", 8)
    for i in range(40):
        assert templating.render(f"{i}:{{{{ v }}}}", {"v": i}) == f"{i}:{i}"
    assert len(templating._compiled) <= 8
