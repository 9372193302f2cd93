"""`lrc package` / `lrc verify`: the reproducibility package of a run folder (seed 000).

Built on the session's small demo run (read-only: every change is made to an extracted copy).
One verification rebuilds the whole small run (a few seconds); the hostile-archive cases stop
at the headers and take milliseconds.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from helpers.project import run_lrc
from lrc.runtime.publish import package as pkg
from lrc.runtime.publish.verify_package import verify_package


@pytest.fixture(scope="module")
def packaged(small_demo_run, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(lock, run folder, package) of the small demo, packaged through the CLI."""
    lock, out, _ = small_demo_run
    target = tmp_path_factory.mktemp("package") / "small.tar.gz"
    res = run_lrc("package", out, "--out", target, "--plan", lock)
    assert res.returncode == 0, res.stderr
    assert "wrote" in res.stdout and target.is_file()
    return lock, out, target


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def _repack(members: dict[str, bytes], path: Path) -> Path:
    """Write `members` (names with the package prefix) as a package tar.gz at `path`."""
    prefix = next(iter(members)).split("/", 1)[0]
    path.write_bytes(pkg._tar_bytes({n.split("/", 1)[1]: d for n, d in members.items()}, prefix))
    return path


def _reseal_manifest(members: dict[str, bytes], prefix: str, name: str) -> None:
    """Update MANIFEST.json's entry of `name` to its current bytes (a careful tamperer)."""
    key = f"{prefix}/MANIFEST.json"
    doc = json.loads(members[key])
    for entry in doc["members"]:
        if entry["path"] == name:
            data = members[f"{prefix}/{name}"]
            entry["sha256"], entry["size"] = pkg._sha256(data), len(data)
    members[key] = pkg._canonical(doc)


def test_same_run_folder_gives_identical_bytes(packaged, tmp_path):
    lock, out, first = packaged
    again = tmp_path / "again.tar.gz"
    pkg.build(out, again, plan_path=lock)
    assert again.read_bytes() == first.read_bytes()
    raw = first.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip mtime 0
    with tarfile.open(first, "r:gz") as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == sorted(i.name for i in infos)
    assert {(i.mtime, i.uid, i.gid, i.mode, i.uname, i.gname, i.type) for i in infos} == {(0, 0, 0, 0o644, "", "", tarfile.REGTYPE)}


def test_package_holds_the_reproducibility_parts(packaged):
    lock, out, path = packaged
    members = _members(path)
    prefix = next(iter(members)).split("/", 1)[0]
    names = {n.split("/", 1)[1] for n in members}
    for required in ("plan.lock", "requirements.lock", "README.md", "MODEL_CARD.md", "MANIFEST.json", "run/journal.jsonl",
                     "run/summary.json", "run/cells.csv", "run/cells.parquet", "run/rate-card.md"):
        assert required in names, required
    assert any(n.startswith("run/items/") for n in names) and any(n.startswith("run/runs/") for n in names)
    assert any(n.startswith("rubrics/") for n in names)
    assert json.loads(members[f"{prefix}/adjudications.json"])["adjudications"] == []  # no review imported in the demo
    locked = json.loads(lock.read_bytes())["plan"]["code"]
    assert {f"source/{f}" for e in locked.values() for f in e["files"]} == {n for n in names if n.startswith("source/")}
    manifest = json.loads(members[f"{prefix}/MANIFEST.json"])
    listed = {e["path"]: e for e in manifest["members"]}
    assert set(listed) == names - {"MANIFEST.json"}
    assert all(pkg._sha256(members[f"{prefix}/{n}"]) == e["sha256"] for n, e in listed.items())
    assert manifest["redaction"]["marker"] == "[REDACTED:<NAME>]"
    assert (out / "summary.json").read_bytes() == members[f"{prefix}/run/summary.json"]  # what was published, not a rebuild
    card = members[f"{prefix}/MODEL_CARD.md"].decode()
    assert "synthetic" in card and "Known limitations" in card and "Thirty tasks cannot establish" in card
    assert "lrc/baseline" in card and "reference model" in card.lower() and "Seed policy: public" in card
    assert "lrc verify" in members[f"{prefix}/README.md"].decode()


def test_redacted_traces_are_marked_incomplete(small_demo_run, tmp_path):
    import shutil

    lock, out, _ = small_demo_run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    trace = sorted((copy / "runs").rglob("trace.json"))[0]
    trace.write_text(trace.read_text().replace('"messages": [', '"messages": ["[REDACTED:OPENAI_API_KEY]", ', 1))
    pkg.build(copy, tmp_path / "r.tar.gz", plan_path=lock)
    manifest = json.loads(next(d for n, d in _members(tmp_path / "r.tar.gz").items() if n.endswith("/MANIFEST.json")))
    marked = [e for e in manifest["members"] if "redaction" in e]
    assert [e["path"] for e in marked] == [f"run/{trace.relative_to(copy).as_posix()}"]
    assert marked[0]["redaction"] == {"markers": 1, "complete": False}
    assert manifest["redaction"]["files_with_markers"] == 1


def test_verify_recomputes_and_passes(packaged):
    _, _, path = packaged
    res = run_lrc("verify", path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "OK: every published output was recomputed" in res.stdout
    assert "packaged source matches the lock" in res.stdout and "installed lrc matches it" in res.stdout


def test_tampered_numbers_and_changed_source_are_each_named(packaged, tmp_path):
    """Three tamperings in one package (one verification rebuilds the whole run): each is named,
    none hides another."""
    _, _, path = packaged
    members = _members(path)
    prefix = next(iter(members)).split("/", 1)[0]
    # summary.json: a published number changed, MANIFEST.json left alone (it catches it too).
    summary = json.loads(members[f"{prefix}/run/summary.json"])
    summary["runs_graded"] += 1
    members[f"{prefix}/run/summary.json"] = (json.dumps(summary, sort_keys=True, indent=2) + "\n").encode()
    # cells.csv: a pass count changed and MANIFEST.json resealed: only the recomputation can tell.
    rows = list(csv.DictReader(io.StringIO(members[f"{prefix}/run/cells.csv"].decode())))
    rows[0]["passes"] = str(int(rows[0]["passes"]) + 1)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    members[f"{prefix}/run/cells.csv"] = buf.getvalue().encode()
    _reseal_manifest(members, prefix, "run/cells.csv")
    # A packaged grader given a line that would pass everything, MANIFEST.json resealed.
    name = next(n.split("/", 1)[1] for n in sorted(members) if n.endswith("/grading.py") and "/source/" in f"/{n}")
    members[f"{prefix}/{name}"] += b"\nPASS_EVERYTHING = True\n"
    _reseal_manifest(members, prefix, name)
    # adjudications.json: a human grade added beside the journal, MANIFEST.json resealed.
    notes = json.loads(members[f"{prefix}/adjudications.json"])
    notes["adjudications"].append({"type": "adjudication", "run": "r", "scope": "spot-check", "judgment": {"clarity": 5}})
    members[f"{prefix}/adjudications.json"] = pkg._canonical(notes)
    _reseal_manifest(members, prefix, "adjudications.json")
    report = verify_package(_repack(members, tmp_path / "t.tar.gz"))
    text = "\n".join(report.differences)
    assert "adjudications.json line " in text, text
    assert "run/summary.json: content differs from MANIFEST.json" in text
    assert "run/summary.json /runs_graded: differs: published" in text
    key = f"{rows[0]['workload']}|{rows[0]['model']}|{rows[0]['system']}"
    assert f"run/cells.csv row {key} column passes: differs: published '{rows[0]['passes']}'" in text
    assert "run/cells.csv: content differs" not in text
    assert f"{name}: differs from the lock's digest for" in text
    assert "fingerprint differs from the lock" in text


def test_changed_price_in_the_lock_is_refused_by_name(packaged, tmp_path):
    _, _, path = packaged
    members = _members(path)
    prefix = next(iter(members)).split("/", 1)[0]
    lock = json.loads(members[f"{prefix}/plan.lock"])
    lock["plan"]["models"]["lrc/baseline"]["price"]["output"] = "15.00"
    members[f"{prefix}/plan.lock"] = (json.dumps(lock, sort_keys=True, indent=2) + "\n").encode()
    _reseal_manifest(members, prefix, "plan.lock")
    tampered = _repack(members, tmp_path / "p.tar.gz")
    res = run_lrc("verify", tampered)
    assert res.returncode == 1, res.stdout + res.stderr
    # the lock's content is checked before its digests (runtime/lock/shape.py): the model is named at its pointer
    assert "DIFFERS plan.lock: the lock's content is not what `lrc compile` writes" in res.stdout
    assert "/plan/models/lrc~1baseline: differs from the edition's entry and price of 'lrc/baseline'" in res.stdout
    assert "Traceback" not in res.stderr


def test_a_resealed_lock_with_another_price_is_caught_by_re_pricing(packaged, tmp_path):
    """A careful tamperer changes a price, recomputes the lock's digests, points the journal at the
    new plan and reseals MANIFEST.json: re-pricing the recorded token counts still names the cells."""
    from lrc.runtime.lock import format as lockformat

    _, _, path = packaged
    members = _members(path)
    prefix = next(iter(members)).split("/", 1)[0]
    lock = json.loads(members[f"{prefix}/plan.lock"])
    lock["plan"]["models"]["lrc/baseline"]["price"]["output"] = "15.00"
    lock["plan"]["edition"]["spec"]["pricing"]["lrc/baseline"]["output"] = "15.00"
    lock["sections"] = lockformat.section_digests(lock["plan"])
    old_root, lock["root_digest"] = lock["root_digest"], lockformat.root_digest(lock)
    members[f"{prefix}/plan.lock"] = lockformat.dumps(lock)
    journal = members[f"{prefix}/run/journal.jsonl"]
    members[f"{prefix}/run/journal.jsonl"] = journal.replace(old_root.encode(), lock["root_digest"].encode(), 1)
    for name in ("plan.lock", "run/journal.jsonl"):
        _reseal_manifest(members, prefix, name)
    report = verify_package(_repack(members, tmp_path / "resealed.tar.gz"))
    text = "\n".join(report.differences)
    assert not any(d.startswith(("plan.lock", "MANIFEST", "run/journal.jsonl")) for d in report.differences), text
    assert "|lrc/baseline|single-shot cost_usd + infra_cost_usd: differs from the journal's calls re-priced at the lock's frozen prices: published '0', recomputed '0." in text
    assert "|lrc/baseline|single-shot column cost_usd: differs: published '0', recomputed '0." in text


# -- hostile archives: refused before anything is written -------------------------------------

def _tar(path: Path, entries: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info in entries:
            payload = (data or {}).get(info.name, b"")
            if info.isreg():
                info.size = len(payload) if info.size == 0 else info.size
                tar.addfile(info, io.BytesIO(payload) if payload else None)
            else:
                tar.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _manifest_of(prefix: str, paths: list[str]) -> tuple[tarfile.TarInfo, dict[str, bytes]]:
    """A first member `<prefix>/MANIFEST.json` listing `paths` (the shape `lrc package` writes)."""
    name = f"{prefix}/MANIFEST.json"
    return _file(name), {name: json.dumps({"members": [{"path": p} for p in paths]}).encode()}


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("entries, message", [
    ([_file("p/../../etc/evil")], "'..' component"),
    ([_file("/etc/evil")], "absolute path"),
    ([_link("p/run/summary.json", "/etc/passwd", tarfile.SYMTYPE)], "symbolic link"),
    ([_link("p/run/summary.json", "p/MANIFEST.json", tarfile.LNKTYPE)], "hard link"),
    ([_link("p/dev", "", tarfile.CHRTYPE)], "device"),
    ([_manifest_of("p", ["a"])[0], _file("q/b")], "outside the package folder"),
    ([_file("p/run/summary.json"), _file("p/MANIFEST.json")], "its first member is 'p/run/summary.json', not MANIFEST.json"),
], ids=["traversal", "absolute", "symlink", "hardlink", "device", "two-roots", "manifest-not-first"])
def test_hostile_members_are_refused_before_extraction(tmp_path, entries, message):
    listing = json.dumps({"members": [{"path": e.name.split("/", 1)[-1]} for e in entries]}).encode()
    archive = _tar(tmp_path / "h.tar.gz", entries, {e.name: listing if e.name.endswith("/MANIFEST.json") else b"x" for e in entries})
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(pkg.ArchiveRefused, match=message.replace("(", r"\(")):
        pkg.extract(archive, dest)
    assert list(dest.iterdir()) == []
    assert not (tmp_path.parent / "etc").exists()


def test_decompression_bombs_are_refused(tmp_path):
    limits = pkg.Limits(members=50, member_bytes=1 << 20, total_bytes=4 << 20)
    # A member declaring more than the limit (its data need not even be there).
    huge = _file("p/huge")
    huge.size = 5 << 30
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb") as gz:
        gz.write(huge.tobuf(tarfile.PAX_FORMAT))
    (tmp_path / "declared.tar.gz").write_bytes(raw.getvalue())
    with pytest.raises(pkg.ArchiveRefused, match="over the .*-byte limit"):
        pkg.scan(tmp_path / "declared.tar.gz")
    # Real zeros: 2 MiB compress to a few KiB.
    _tar(tmp_path / "zeros.tar.gz", [_file("p/zeros")], {"p/zeros": bytes(2 << 20)})
    assert (tmp_path / "zeros.tar.gz").stat().st_size < 20_000
    with pytest.raises(pkg.ArchiveRefused, match="decompression bomb"):
        pkg.scan(tmp_path / "zeros.tar.gz", limits)
    # Many members, every one listed.
    first, listing = _manifest_of("p", [str(i) for i in range(60)])
    _tar(tmp_path / "many.tar.gz", [first, *(_file(f"p/{i}") for i in range(60))], {**listing, **{f"p/{i}": b"x" for i in range(60)}})
    with pytest.raises(pkg.ArchiveRefused, match="more than 50 members"):
        pkg.scan(tmp_path / "many.tar.gz", limits)
    # A gzip stream that never ends in a tar: capped, never read to the end.
    with gzip.open(tmp_path / "stream.tar.gz", "wb") as gz:
        info = _file("p/a")
        info.size = 3 << 20
        gz.write(info.tobuf(tarfile.PAX_FORMAT) + bytes(3 << 20))
    with pytest.raises(pkg.ArchiveRefused, match="decompression bomb|over the"):
        pkg.scan(tmp_path / "stream.tar.gz", pkg.Limits(members=50, member_bytes=8 << 20, total_bytes=1 << 20))


@pytest.mark.parametrize("manifest", [
    b'{"members": [{"path": "run/summary.json"}]}',  # lists one file; thousands follow
    b"not json", b"[" * 100_000 + b"]" * 100_000, b'{"members": 7}', b'{"members": [{"path": 7}]}', b'{"members": [{}]}',
], ids=["lists-one", "not-json", "deep", "not-a-list", "path-not-text", "no-path"])
def test_members_the_manifest_does_not_list_are_refused_at_the_first_before_extraction(tmp_path, manifest):
    """An archive of many stray files (600,000 empty ones took 153 s to extract, then "differs",
    exit 1): refused as it streams by, at the first member its MANIFEST.json does not list, or at
    a manifest that lists nothing readable -- nothing is written."""
    strays = [f"p/run/runs/r{i}/trace.json" for i in range(3000)]
    archive = _tar(tmp_path / "strays.tar.gz", [_file("p/MANIFEST.json"), _file("p/run/summary.json"), *map(_file, strays)],
                   {"p/MANIFEST.json": manifest, "p/run/summary.json": b"{}"})
    dest = tmp_path / "dest"
    dest.mkdir()
    expected = "'p/run/runs/r0/trace.json' is not listed in MANIFEST.json" if manifest.startswith(b'{"members": [{"path": "run') \
        else "MANIFEST.json is not a package manifest|lists a member path that is not text"
    with pytest.raises(pkg.ArchiveRefused, match=expected):
        pkg.extract(archive, dest)
    assert list(dest.iterdir()) == []
    res = run_lrc("verify", archive)
    assert res.returncode == 4 and "refused" in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_verify_cli_refuses_damaged_and_hostile_archives_without_a_traceback(tmp_path):
    (tmp_path / "not.tar.gz").write_bytes(b"this is not an archive")
    _tar(tmp_path / "evil.tar.gz", [_file("p/../../evil")], {"p/../../evil": b"x"})
    (tmp_path / "cut.tar.gz").write_bytes(gzip.compress(b"\0" * 100)[:30])
    for name, message in (("not.tar.gz", "not a gzip file"), ("evil.tar.gz", "path traversal"), ("cut.tar.gz", "damaged")):
        res = run_lrc("verify", tmp_path / name)
        assert res.returncode == 4, (name, res.stdout, res.stderr)
        assert message in res.stderr and "refused" in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_package_refuses_a_folder_of_another_plan(small_demo_run, tmp_path, repo):
    _, out, _ = small_demo_run
    res = run_lrc("package", out, "--out", tmp_path / "x.tar.gz", "--plan", repo / "generated" / "demo" / "plan.lock")
    assert res.returncode == 4 and "pass --plan with the lock the folder was run with" in res.stderr, res.stderr
    assert not (tmp_path / "x.tar.gz").exists()
    res = run_lrc("package", out, "--out", out / "inside.tar.gz")
    assert res.returncode == 4 and "inside the run folder" in res.stderr, res.stderr


# -- held-out editions: the seed is packed only once released ---------------------------------

def _held_out(lock_path: Path, seed: str) -> dict:
    from lrc.runtime.lock.canonical import digest_bytes

    lock = json.loads(lock_path.read_bytes())
    lock["plan"]["seed"] = {"policy": "held-out", "commitment": digest_bytes("seed", seed.encode())}
    return lock


def test_a_held_out_seed_is_never_in_the_package_unless_released(small_demo_run, tmp_path):
    from lrc.runtime.publish import texts
    from lrc.runtime.publish.verify_package import Report, _seed

    lock_path, _, _ = small_demo_run
    lock = _held_out(lock_path, "the-secret-seed")
    summary = {"runs_graded": 1, "runs_planned": 1}
    withheld = texts.model_card(lock, summary, {}, True)
    assert "held-out, **not released**" in withheld and "the-secret-seed" not in withheld
    released = texts.model_card(lock, summary, {"seed/held-out.seed": b"the-secret-seed\n"}, True)
    assert "held-out, **released**" in released
    # verify: without the seed it says why nothing is recomputed; a released seed is checked against the commitment.
    report = Report()
    assert _seed(tmp_path, lock, None, report) is None
    assert "not released in the package" in report.differences[0]
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "held-out.seed").write_text("the-secret-seed\n")
    assert _seed(tmp_path, lock, None, Report()) == "the-secret-seed"
    (tmp_path / "wrong.seed").write_text("another seed\n")
    wrong = Report()
    assert _seed(tmp_path, lock, tmp_path / "wrong.seed", wrong) is None
    assert "does not match the locked seed commitment" in wrong.differences[0]


def test_package_refuses_a_released_seed_for_a_public_edition(small_demo_run, tmp_path):
    lock, out, _ = small_demo_run
    (tmp_path / "s.seed").write_text("x\n")
    res = run_lrc("package", out, "--out", tmp_path / "x.tar.gz", "--plan", lock, "--released-seed", tmp_path / "s.seed")
    assert res.returncode == 4 and "public and in the lock" in res.stderr, res.stderr


def test_the_packed_journal_is_checked_and_its_human_records_packed_as_it_holds_them(small_demo_run, tmp_path):
    """`lrc package` read the journal's adjudication lines with json.loads of its own: a line every
    other command refuses (5,000-deep, a 5,000-digit number) ended it in exit 70, and so did a
    reviewer's name holding a lone surrogate, which the journal keeps (escaped). Now the packed
    journal is read by the journal's own reader, adjudications.json holds the adjudications and
    the categorizations it names, as the journal holds them, and `lrc verify` derives it again."""
    import shutil

    lock, out, _ = small_demo_run
    folder = tmp_path / "run"
    shutil.copytree(out, folder)
    journal = folder / "journal.jsonl"
    runs = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    key = next(r["run"] for r in runs if r.get("type") == "run" and "|lrc/null|" in r["run"] and r["run"].startswith("triage."))
    res = run_lrc("categorize", folder, "--plan", lock, "--run", key, "--primary", "refusal", "--note", "read by hand")
    assert res.returncode == 0, res.stdout + res.stderr
    judged = next(r for r in runs if r.get("type") == "judge" and r["run"].startswith("generate.variance-commentary."))
    rubric = json.loads(Path(lock).read_text(encoding="utf-8"))["plan"]["workloads"][judged["run"].split("|")[0]]["spec"][
        "grading"]["judge"]["rubric"]
    grade = {"type": "adjudication", "run": judged["run"], "rubric": rubric, "scope": "spot-check", "sample_digest": "d",
             "workbook_sha256": "0" * 64, "judgment": {"clarity": 4, "cause_attribution": 4, "justification": "\ud800 fine"},
             "reviewer": "\ud800 Ann"}
    with journal.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(grade) + "\n")  # escaped, as lrc's own writer keeps a lone surrogate
    assert run_lrc("report", lock, "--out", folder).returncode == 0
    target = tmp_path / "p.tar.gz"
    res = run_lrc("package", folder, "--out", target, "--plan", lock)
    assert res.returncode == 0, res.stdout + res.stderr
    members = _members(target)
    notes = json.loads(next(d for n, d in members.items() if n.endswith("/adjudications.json")))
    assert [a["reviewer"] for a in notes["adjudications"]] == ["\ud800 Ann"]
    assert [(c["run"], c["primary"], c["note"]) for c in notes["categorizations"]] == [(key, "refusal", "read by hand")]
    report = verify_package(target)
    assert report.differences == [], report.differences

    lines = journal.read_text(encoding="utf-8").splitlines()
    for n, (damage, raw) in enumerate([({"judgment": {**grade["judgment"], "clarity": "<raw>"}}, "[" * 5000 + "]" * 5000),
                                       ({"judgment": {**grade["judgment"], "clarity": "<raw>"}}, "1" + "0" * 5000),
                                       ({"seq": "x", "type": "categorization"}, None)]):
        line = json.dumps({**grade, **damage}).replace('"<raw>"', raw or '"<raw>"')
        journal.write_text("\n".join(lines + [line]) + "\n", encoding="utf-8")
        bad = tmp_path / f"bad-{n}.tar.gz"
        res = run_lrc("package", folder, "--out", bad, "--plan", lock)
        assert res.returncode == 4, res.stdout + res.stderr
        assert f"journal.jsonl:{len(lines) + 1}: damaged journal line" in res.stderr and "nothing was packed" in res.stderr
        assert "internal error" not in res.stderr and not bad.exists()
