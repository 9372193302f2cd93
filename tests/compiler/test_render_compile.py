"""The compiler compiles each prompt template once: the undeclared names it records and the
template it builds are what jinja2.meta and `from_string` give."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import meta

from lrc.compiler.render import _compile
from lrc.runtime.lock.templating import make_environment, render

REPO = Path(__file__).resolve().parents[2]
TRICKY = [
    "{{ item.a }} {{ task.b | upper }}",
    "{% for x in item.rows %}{{ loop.index }} {{ x }} {{ outer }}{% endfor %}",
    "{% set y = item.z %}{{ y }}{{ undefined_one }}",
    "{% macro m(a) %}{{ a }}{{ b }}{% endmacro %}{{ m(item) }}",
    "{% if task.x %}{{ task.x }}{% else %}{{ other }}{% endif %}",
    "{{ range(3) | list }} {{ namespace }} {{ dict(a=1) }}",
    "{% with q = item %}{{ q.v }}{% endwith %}{{ q }}",
    "{{ '%s' % item.n }} {{ item.items() | list | length }}",
]


def _templates() -> list[str]:
    found = [p.read_text(encoding="utf-8") for p in sorted((REPO / "specs").rglob("*.j2"))]
    assert len(found) >= 10
    return found + TRICKY


@pytest.mark.parametrize("source", _templates())
def test_one_compile_gives_what_meta_and_from_string_give(source: str):
    env = make_environment()
    parsed = env.parse(source)
    template, undeclared = _compile(env, parsed)
    assert undeclared == meta.find_undeclared_variables(make_environment().parse(source))
    context = {"item": {"a": 1, "rows": [1, 2], "z": 3, "v": 4, "n": 5}, "task": {"b": "x", "x": 0},
               "outer": "o", "undefined_one": 1, "b": 2, "other": 3, "q": 9}
    try:
        expected = render(source, context)
    except Exception as exc:  # noqa: BLE001 - the same error either way
        with pytest.raises(type(exc)):
            render(source, context, template=template)
        return
    assert render(source, context, template=template) == expected
