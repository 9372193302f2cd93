"""The template sandbox refuses, before allocating, what would build a value far above the
prompt size cap: str methods with a width or a repeated replacement, `~` and `+` that double
a string per loop step, filters with a count argument, and nested lists printed or summed.
And jinja never evaluates filters while compiling a template (constant folding), where no
render deadline runs. The compiler's environment and the runtime's are the same one
(`make_environment`), so each case is checked on it, in a subprocess with a memory ceiling:
before these bounds, each of them took gigabytes (or a minute) and the ceiling turns that into
a failure instead of a stuck machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HOSTILE = [
    "{% set x = [1]|slice(30000000)|list %}",
    "{% set x = [1]|batch(150000000, 0)|list %}",
    "{{ [1]|slice(30000000)|list|length }}",
    "{% set x = 'x'.ljust(1500000000) %}",
    "{% set x = 'x'.rjust(1500000000) %}",
    "{% set x = 'x'.center(1500000000) %}",
    "{% set x = 'x'.zfill(1500000000) %}",
    "{% set x = 'a\tb'.expandtabs(1500000000) %}",
    "{% set x = 'x'.encode().ljust(1500000000) %}",
    "{% set x = '{:>1500000000}'.format(1) %}",
    "{% set x = ('a' * 400000).replace('', 'b' * 400000) %}",
    "{% set x = ('a' * 400000)|replace('', 'b' * 400000) %}",
    "{% set x = ('a' * 400000).join(['b'] * 400000) %}",
    "{% set x = ['a' * 400000] * 400000 %}{{ x|join|length }}",
    "{% set x = [[1] * 400000] * 400000 %}",
    "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|tojson|length }}",
]

_PROBE = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    from lrc.runtime.lock.templating import RenderTooLarge, make_environment, render
    out = []
    for source in json.loads(sys.argv[1]):
        start = time.monotonic()
        try:
            env = make_environment()
            render(source, {"task": {}, "item": {}}, template=env.from_string(source))
            result = "rendered"
        except RenderTooLarge as exc:
            result = "refused"
        except BaseException as exc:
            result = type(exc).__name__
        out.append([source, result, round(time.monotonic() - start, 2)])
    print(json.dumps(out))
""")


@pytest.mark.parametrize("source", HOSTILE)
def test_a_template_that_would_allocate_gigabytes_is_refused_before_it_does(source: str) -> None:
    res = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([source])], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    [[_, result, seconds]] = json.loads(res.stdout)
    assert result == "refused", f"{source}: {result} after {seconds}s"
    assert seconds < 2, f"{source}: refused only after {seconds}s"


def test_ordinary_templates_render_as_before() -> None:
    from lrc.runtime.lock.templating import make_environment, render

    source = ("{{ [1, 2]|sum }} {{ ['a', 'b']|join(', ') }} {{ users|join('/', attribute='n') }} {{ 'a b'.replace(' ', '-') }} "
              "{{ [[1], [2]]|sum(start=[]) }} {{ 'x'.ljust(3) }}|{{ {'a': 1}|tojson }} {{ [1, 'b'] }} {{ 'ab' ~ 3 }} "
              "{{ 'a\tb'.expandtabs(2) }} {{ '7'.zfill(3) }} {{ 'ab' + 'c' }} {{ [1] + [2] }} {{ ['-'] * 3 }} {{ item.text|replace('o', '0') }}")
    context = {"task": {}, "item": {"text": "foo"}, "users": [{"n": "a"}, {"n": "b"}]}
    expected = ("3 a, b a/b a-b [1, 2] x  |{\"a\": 1} [1, 'b'] ab3 a b 007 abc [1, 2] ['-', '-', '-'] f00")
    assert render(source, context, template=make_environment().from_string(source)) == expected


def test_filters_are_not_run_while_a_template_compiles() -> None:
    """jinja's constant folding would run `slice` at compile time, before any deadline."""
    from lrc.runtime.lock.templating import SETTINGS, make_environment

    calls: list[tuple] = []
    env = make_environment()
    env.filters["probe"] = lambda value: calls.append(value) or value
    template = env.from_string("{% set x = [1]|probe %}{{ [2]|probe }}")
    assert calls == []
    template.render()
    assert calls == [[1], [2]]
    assert SETTINGS["constant_folding"] is False
