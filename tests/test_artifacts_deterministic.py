"""Generated Office artifacts are byte-identical for the same seed: across saves, time zones and
PYTHONHASHSEED (DESIGN §4.2), and the canary digests catch a change in behaviour."""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
import time
import zipfile

from lrc.runtime.artifacts import deck, deterministic, model

SCRIPT = """
import hashlib, sys
from lrc.runtime.artifacts import deck, model
print(hashlib.sha256(model.three_statement("canary")).hexdigest())
print(hashlib.sha256(deck.board_deck("canary")).hexdigest())
"""


def digests() -> list[str]:
    return [hashlib.sha256(model.three_statement("canary")).hexdigest(), hashlib.sha256(deck.board_deck("canary")).hexdigest()]


def test_the_same_seed_gives_the_same_bytes_twice():
    first = digests()
    time.sleep(1.1)  # past zip's two-second clock granularity half of the time, past openpyxl's seconds always
    assert digests() == first


def test_the_bytes_do_not_depend_on_time_zone_or_hash_seed():
    here = digests()
    for tz, hashseed in (("Pacific/Kiritimati", "1"), ("America/St_Johns", "4242")):
        env = {**os.environ, "TZ": tz, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True)
        assert out.stdout.split() == here, (tz, hashseed)


def test_different_seeds_give_different_models():
    assert model.three_statement("canary") != model.three_statement("other")


def test_no_clock_creator_or_host_noise_is_left():
    for data in (model.three_statement("canary"), deck.board_deck("canary")):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
            assert infos[0].filename == "[Content_Types].xml"
            assert [i.filename for i in infos[2:]] == sorted(i.filename for i in infos[2:])
            assert {i.date_time for i in infos} == {deterministic.ZIP_TIME}
            core = z.read("docProps/core.xml")
            assert core.count(deterministic.FIXED_W3CDTF) == 2, core
            assert re.search(rb"<dc:creator[^>]*>lrc</dc:creator>", core), core
            for name in z.namelist():
                if name.startswith("ppt/embeddings/"):  # the chart's own workbook, written by xlsxwriter
                    with zipfile.ZipFile(io.BytesIO(z.read(name))) as inner:
                        assert inner.read("docProps/core.xml").count(deterministic.FIXED_W3CDTF) == 2


def test_normalizing_is_idempotent():
    data = deck.board_deck("canary")
    assert deterministic.normalize_package(data) == data


# Golden digests of the canary output: a library upgrade that changes the bytes changes these.
CANARY = {
    "model": "e14a13739a857eb2ada9fdd79259c75d2dab4876edf6b0fa1e0bf2504d7e8963",
    "deck": "185bbea5d80316f56603a59439c1ae9ee71a2f785359c7d682c33f608c7395a4",
}


def test_canary_digests():
    assert dict(zip(("model", "deck"), digests())) == CANARY
