"""The spec author's paths that used to end in a wall: `lrc explain` without a code, a spec
passed where a lock belongs, one stale-generated/ message instead of one per file, template
errors with their line, and every location of `lrc diff` and of the gate a line of its file.

CLI behaviour is checked through a subprocess (support.run_lrc) on throw-away copies of the
repository's specs/ and schemas/.
"""

from __future__ import annotations

import re

from support import run_lrc

from lrc.compiler.codes import CODES, RANGES


def test_explain_without_a_code_lists_every_code_grouped_by_range() -> None:
    for args in (("explain",), ("explain", "--list")):
        res = run_lrc(*args)
        assert res.returncode == 0, res.stderr
        assert "usage:" not in res.stderr
        heading = None
        seen: dict[str, str] = {}
        for line in res.stdout.splitlines():
            if line.endswith(":") and not line.startswith(" "):
                heading = line[:-1]
            elif m := re.fullmatch(r"  (LRC\d{4})  (.+)", line):
                assert m[1] not in seen, f"{m[1]} listed twice"
                seen[m[1]] = heading
                assert m[2] == CODES[m[1]].title
        assert set(seen) == set(CODES)
        for code, heading in seen.items():  # each under its own range (longest prefix wins)
            prefix = max((p for p, t in RANGES if code.startswith(p)), key=len)
            assert heading == dict(RANGES)[prefix], (code, heading)
    # Every range heading appears in the module docstring, where the ranges are documented.
    import lrc.compiler.codes as codes

    for _, title in RANGES:
        assert title.split(" ", 1)[0] in codes.__doc__


def test_explain_refuses_a_code_with_list_and_an_unknown_code() -> None:
    assert run_lrc("explain", "--list", "LRC1001").returncode == 2
    res = run_lrc("explain", "LRC0000")
    assert res.returncode == 2 and "unknown diagnostic code" in res.stderr
