"""The item PDFs do not depend on whether reportlab's C accelerator (rl_accel) is installed.

Why: `rl_accel` is in requirements.lock for speed -- without it reportlab escapes every PDF
string and formats every number in Python (`_py_escapePDF`, `_py_fp_str`: half of the board
brief generator's time). But "same seed => byte-identical items" must hold on every install,
including one where the accelerator is missing (another platform, `pip install .` with a
build failure): a PDF written through the C functions must be the PDF the Python ones write.
Checked twice: end to end on the demo's PDF-bearing items, generated in a process with the
accelerator and in one where its import is blocked; and function by function, on generated
inputs, through reportlab's own testing switch (`reportlab._rl_testing` keeps both).
"""

from __future__ import annotations

import json
import subprocess
import sys

from helpers.project import REPO

_ITEMS = r"""
import hashlib, json, sys
if sys.argv[1] == "blocked":
    sys.modules["_rl_accel"] = None  # `from _rl_accel import ...` raises ImportError: reportlab's Python fallbacks
import reportlab.lib.rl_accel as accel
from lrc.runtime.workloads.extract_invoice import generator as invoice
from lrc.runtime.workloads.synthesize_board_brief import generator as brief
plan = json.load(open(sys.argv[2], encoding="utf-8"))["plan"]
seed = plan["seed"]["value"]
params = {ref: wl["spec"]["dataset"].get("params", {}) for ref, wl in plan["workloads"].items()}
out = {"python": sorted(accel._py_funcs)}
for name, module, ref in (("invoice", invoice, "extract.invoice"), ("brief", brief, "synthesize.board-brief")):
    wl = next(r for r in params if r.startswith(ref + "."))
    for index in range(4):
        item = module.generate(seed, index, params[wl])
        assert item.files, name
        out[f"{name}-{index}"] = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(item.files.items())}
print(json.dumps(out))
"""


def test_the_demos_pdfs_are_the_same_bytes_with_and_without_the_accelerator():
    lock = str(REPO / "generated" / "demo" / "plan.lock")
    runs = {}
    for mode in ("accelerated", "blocked"):
        res = subprocess.run([sys.executable, "-c", _ITEMS, mode, lock], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        runs[mode] = json.loads(res.stdout)
    assert runs["accelerated"].pop("python") == [], "rl_accel is installed (requirements.lock) and every function is C"
    assert {"fp_str", "escapePDF"} <= set(runs["blocked"].pop("python")), "the blocked run used the Python fallbacks"
    assert runs["accelerated"] == runs["blocked"]


_FUNCTIONS = r"""
import json, random, struct, sys
import reportlab
reportlab._rl_testing = True  # reportlab's own switch: keep the Python fallbacks beside the C functions
from reportlab.lib import rl_accel
c, py = rl_accel._c_funcs, rl_accel._py_funcs
rng = random.Random(20261204)
def number():
    kind = rng.randrange(5)
    if kind == 0:
        return struct.unpack("<d", rng.randbytes(8))[0]
    if kind == 1:
        return rng.choice([0.0, -0.0, 1e-7, -1e-7, 1.0000005e-7, 0.5, 1.0, 1.5, 10.0, 999999.5, 1e6, 1e7, 123456.0])
    if kind == 2:
        return round(rng.uniform(-1000, 1000), rng.randrange(8))
    if kind == 3:
        return rng.randrange(-10**7, 10**7)
    return rng.uniform(-1, 1) * 10 ** rng.randrange(-9, 9)
bad = []
for _ in range(20000):
    args = [number() for _ in range(rng.randrange(1, 7))]
    args = [a for a in args if a == a and abs(a) < 1e15] or [0.0]
    if c["fp_str"](*args) != py["fp_str"](*args):
        bad.append(("fp_str", repr(args)))
alphabet = "()\\\r\n\t\x00\x7f\x80\xff abcXYZ019%&" + "".join(chr(i) for i in range(0, 256, 7))
for _ in range(20000):
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
    if c["escapePDF"](text) != py["escapePDF"](text):
        bad.append(("escapePDF", repr(text)))
print(json.dumps(bad[:10]))
"""


def test_reportlabs_c_functions_equal_its_python_fallbacks_on_generated_inputs():
    res = subprocess.run([sys.executable, "-c", _FUNCTIONS], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout) == []
