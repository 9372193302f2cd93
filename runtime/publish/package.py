"""The reproducibility package (seed 000, "Reproducibility package"; `lrc package`): the one
module that owns its format, writing it and reading it back.

A package is a tar.gz of one published run folder with everything another person needs to
reproduce the calculation offline, every member under one folder `<edition ref>-<plan digest>/`:

    README.md           how to verify it (`lrc verify pkg.tar.gz`) and what each part is
    MODEL_CARD.md       limitations: synthetic data, reference models, the seed, redaction
    MANIFEST.json       every other member with its sha256, size and role; redaction per file
    plan.lock           the pre-registration: prompts, tool schemas, task definitions, the split
                        manifest, frozen prices, system configuration, code fingerprints
    requirements.lock   every dependency with its version and hashes
    rubrics/<ref>.json  the judge and review rubrics, verbatim from the lock
    adjudications.json  the human grades and failure categories appended to the journal
    source/runtime/...  the fingerprinted source files of every locked code component
                        (generators, validators, tools, systems, the analysis code), each
                        checked against the lock's digests before it is packed
    run/journal.jsonl   every call and run, adjudications included: what `lrc report` rebuilds from
    run/items/...       the task inputs and items
    run/runs/...        run-level traces and saved task outputs
    run/<outputs>       what was published (summary.json, cells.csv/.parquet, rate-card.md, ...:
                        `PUBLISHED_OUTPUTS`, nothing else of the folder's top level)
    seed/held-out.seed  a held-out edition's seed, only when it was released (`--released-seed`)

Deterministic: the same run folder gives byte-identical bytes. Members are sorted, every
header is fixed (mtime 0, uid/gid 0, no owner names, mode 0644, regular files only, PAX
format), the gzip header has mtime 0 and no file name, and nothing reads the clock.

A package is hostile input to whoever opens it. `extract` refuses, before writing anything,
absolute names, `..`, anything but regular files (symlinks, hard links, devices, folders),
duplicate names, oversized or too many members, an archive whose first member is not its
MANIFEST.json and any member that manifest does not list (each refused as it streams by, so
an archive of 600,000 stray files stops at the first), and it caps the bytes decompressed,
so a decompression bomb stops at the cap rather than at the disk's end.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import stat
import sys
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from lrc.runtime.outfolder import OUTPUT_FILES

PACKAGE_FORMAT = 1
MANIFEST = "MANIFEST.json"  # the first member of every package: the list every other member is checked against
REDACTION_MARKER = b"[REDACTED:"
"""What `lrc.runtime.redact` puts where a secret was (`[REDACTED:<NAME>]`)."""

PUBLISHED_OUTPUTS = OUTPUT_FILES
"""The only top-level files packed beside journal.jsonl: lrc's outputs. Anything else an
operator left there (a credentials.json, notes, a spreadsheet) is not lrc's and is never
packed; it is named instead."""

EXIT_OK, EXIT_PROBLEMS, EXIT_REFUSED = 0, 1, 4


class PackageError(Exception):
    """A run folder that cannot be packaged honestly (message says why and what to do)."""


class ArchiveRefused(Exception):
    """An archive that is not a package, is damaged, or is hostile."""


# -- writing ------------------------------------------------------------------------------

@dataclass
class Built:
    path: Path
    members: int
    size: int
    prefix: str
    skipped: list[str]
    """Top-level names of the run folder that are not lrc outputs, so not packed."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> bytes:
    """`value` as indented JSON, keys sorted, UTF-8. A string holding a lone surrogate (not
    Unicode text: the journal keeps one escaped, `\\ud800`, as it was given) makes the whole
    document ASCII with escapes, so it is written and reads back to the same value."""
    text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True) + "\n").encode("utf-8")


def _regular(path: Path, top: Path) -> bytes:
    """The bytes of one file to pack: a regular file with no other name. A symbolic link, a hard
    link (another name of a file that may lie outside the folder), a FIFO (waited on forever) or
    a device (/dev/zero, read until memory ran out) refuses the package."""
    from lrc.runtime import filebytes

    shown = path.relative_to(top)
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        raise PackageError(f"{shown} is a symbolic link; a package holds regular files only")
    if not stat.S_ISREG(st.st_mode):
        raise PackageError(f"{shown} is not a regular file (a FIFO, a device or a socket); a package holds regular files only")
    if st.st_nlink > 1:
        raise PackageError(f"{shown} is a hard link ({st.st_nlink} names for one file, which may lie outside the folder); "
                           f"lrc never writes one in a run folder: replace it with a copy or rebuild it with `lrc report`")
    try:
        return filebytes.read_whole(path, limit=Limits().member_bytes)
    except OSError as exc:
        raise PackageError(f"cannot read {shown}: {exc.strerror or exc}") from None


def _files_under(folder: Path, top: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise PackageError(f"{path.relative_to(top)} is a symbolic link; a package holds regular files only")
        if not path.is_dir() and not path.name.startswith("."):
            yield path


def _run_members(run_dir: Path) -> tuple[dict[str, bytes], list[str]]:
    """The run folder's members (run/...) and the top-level names left out as not lrc's."""
    members: dict[str, bytes] = {}
    skipped: list[str] = []
    for path in sorted(run_dir.iterdir()):
        if path.name.startswith(".") or path.name in ("items", "runs"):
            continue
        if path.name == "journal.jsonl" or path.name in PUBLISHED_OUTPUTS:
            members[f"run/{path.name}"] = _regular(path, run_dir)
        else:
            skipped.append(path.name)
    for sub in ("items", "runs"):
        if (run_dir / sub).is_symlink():
            raise PackageError(f"{sub} is a symbolic link; a package holds regular files only")
        if (run_dir / sub).is_dir():
            for path in _files_under(run_dir / sub, run_dir):
                members[f"run/{path.relative_to(run_dir).as_posix()}"] = _regular(path, run_dir)
    return members, skipped


def _live_secrets(members: dict[str, bytes]) -> list[str]:
    """`name (SECRET_VARIABLE)` of every member holding the value of a secret set in this
    environment (an API key). Traces are redacted when they are written, never afterwards: a
    file edited or copied in later, or written under another environment, can hold a key in
    clear, and a package is made to be handed out."""
    from lrc.runtime.redact import build_redactor

    redact = build_redactor()
    found = []
    for name, data in sorted(members.items()):
        text = data.decode("utf-8", "surrogateescape")
        clean = redact(text)
        if clean != text:
            names = sorted(set(re.findall(r"\[REDACTED:([A-Za-z0-9_]+)\]", clean)) - set(re.findall(r"\[REDACTED:([A-Za-z0-9_]+)\]", text)))
            found.append(f"{name} ({', '.join(names) or 'a secret'})")
    return found


def _source_files(lock: dict[str, Any]) -> dict[str, bytes]:
    """The files of every locked component, read from the running lrc, each checked against the
    digest the lock recorded for it (a normalized syntax tree: comments and docstrings aside)."""
    from lrc.runtime.lock import codeprint

    root = codeprint.project_root()
    wanted: dict[str, str] = {}
    for ref, entry in sorted(lock["plan"]["code"].items()):
        for rel, file_digest in entry["files"].items():
            wanted.setdefault(rel, file_digest)
    files: dict[str, bytes] = {}
    changed: list[str] = []
    for rel, file_digest in sorted(wanted.items()):
        path = root / rel
        if not path.is_file() or codeprint.file_digest(path) != file_digest:
            changed.append(rel)
            continue
        files[f"source/{rel}"] = path.read_bytes()
    if changed:
        raise PackageError("the running code's source differs from the lock's fingerprints in: " + ", ".join(changed)
                           + "; package with the lrc release the run was made with")
    return files


def journal_records(journal: bytes, lock: dict[str, Any], shown: Path = Path("run/journal.jsonl")) -> list[dict[str, Any]]:
    """The records of a packed journal, checked as every command that reads a journal checks
    them (`lrc.runtime.journal.parse_records`); a torn last line is left out, as `lrc report`
    leaves it. JournalError for a journal lrc did not write as this plan's (`shown` names it)."""
    from lrc.runtime.journal import parse_records

    whole = journal[:journal.rfind(b"\n") + 1]
    return parse_records(whole, shown, lock["root_digest"])


def adjudications(records: list[dict[str, Any]]) -> bytes:
    """adjudications.json: the human grades (`lrc review import`) and failure categories (`lrc
    categorize`) appended to the journal, in journal order -- the adjudication notes of seed 000,
    readable without parsing the journal. `lrc verify` derives it again from the packed journal."""
    return _canonical({
        "note": "appended by `lrc review import` (adjudications) and `lrc categorize` (categorizations); neither "
                "rewrites the run, the judge's record or the derived categories (the journal holds them all); "
                "empty when no human review was imported",
        "adjudications": [r for r in records if r.get("type") == "adjudication"],
        "categorizations": [r for r in records if r.get("type") == "categorization"]})


def _requirements() -> tuple[bytes, bool]:
    """requirements.lock beside the running lrc (versions and hashes); else the installed
    distributions' versions, marked as having no hashes."""
    from importlib import metadata

    from lrc.runtime.lock import codeprint

    path = codeprint.project_root() / "requirements.lock"
    if path.is_file():
        return path.read_bytes(), True
    lines = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"]})
    text = ("# requirements.lock was not found beside this lrc; these are the installed distributions'\n"
            "# versions, WITHOUT hashes\n" + "\n".join(lines) + "\n")
    return text.encode("utf-8"), False


def _role(name: str) -> str:
    if name.startswith("source/"):
        return "source"
    if name.startswith("rubrics/"):
        return "rubric"
    if name.startswith("run/items/"):
        return "item"
    if name.startswith("run/runs/"):
        return "trace" if name.endswith(".json") else "task-output"
    if name == "run/journal.jsonl":
        return "journal"
    if name.startswith("run/"):
        return "published-output"
    return {"plan.lock": "lock", "requirements.lock": "dependencies", "seed/held-out.seed": "released-seed",
            "README.md": "readme", "MODEL_CARD.md": "model-card", "adjudications.json": "adjudication-notes"}.get(name, "other")


def manifest(members: dict[str, bytes], lock: dict[str, Any], prefix: str, summary: dict[str, Any] | None,
             hashed_requirements: bool) -> dict[str, Any]:
    entries = []
    files_marked = markers = 0
    for name, data in sorted(members.items()):
        entry: dict[str, Any] = {"path": name, "sha256": _sha256(data), "size": len(data), "role": _role(name)}
        if entry["role"] not in ("source", "lock", "dependencies", "rubric", "readme", "model-card"):
            count = data.count(REDACTION_MARKER)
            if count:
                entry["redaction"] = {"markers": count, "complete": False}
                files_marked += 1
                markers += count
        entries.append(entry)
    plan = lock["plan"]
    return {
        "package_format": PACKAGE_FORMAT, "prefix": prefix,
        "plan_digest": lock["root_digest"], "edition": plan["edition"]["ref"], "lrc_version": lock["lrc_version"],
        "seed": {"policy": plan["seed"]["policy"], "commitment": plan["seed"]["commitment"],
                 "in_package": "seed/held-out.seed" in members if plan["seed"]["policy"] != "public" else "plan.lock"},
        "partial": bool((summary or {}).get("partial")),
        "requirements_hashed": hashed_requirements,
        "redaction": {"applied": "at write time, by lrc.runtime.redact, to the journal, traces and messages",
                      "marker": "[REDACTED:<NAME>]", "files_with_markers": files_marked, "markers": markers,
                      "note": "a file with markers is incomplete where marked; the secret is not recoverable from the package"},
        "members": entries,
    }


def _tar_bytes(members: dict[str, bytes], prefix: str) -> bytes:
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            # MANIFEST.json first (it sorts first anyway): a reader checks every later member
            # against it as the archive streams by (`scan`).
            for name, data in sorted(members.items(), key=lambda kv: (kv[0] != MANIFEST, kv[0])):
                info = tarfile.TarInfo(f"{prefix}/{name}")
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.type = tarfile.REGTYPE
                tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def build(run_dir: Path, out: Path, plan_path: Path | None = None, seed_file: Path | None = None) -> Built:
    from lrc.runtime.execute import Refused, load_verified, resolve_seed
    from lrc.runtime.journal import JournalError
    from lrc.runtime.publish import texts
    from lrc.runtime.review.cli import _header as journal_header  # the journal's first line, read as `lrc review` does
    from lrc.runtime.review.cli import locate_plan

    if not run_dir.is_dir():
        raise PackageError(f"{run_dir} is not a folder; give the `lrc execute --out` folder")
    try:
        header = journal_header(run_dir)
        out_resolved = out.resolve()
        if out_resolved.is_relative_to(run_dir.resolve()):
            raise PackageError(f"--out {out} is inside the run folder; write the package elsewhere")
        lock_path = locate_plan(run_dir, plan_path)
        # Digests, lrc release and every code fingerprint against the running code: the files
        # packed below are those the lock fingerprinted, or nothing is packed.
        lock = load_verified(lock_path)
    except Refused as exc:
        raise PackageError(str(exc)) from None
    if header.get("plan") != lock["root_digest"]:
        raise PackageError(f"{run_dir} was run with plan {header.get('plan')}, but {lock_path} is plan {lock['root_digest']}: "
                           f"pass --plan with the lock the folder was run with")
    plan = lock["plan"]
    members, skipped = _run_members(run_dir)
    leaked = _live_secrets(members)
    if leaked:
        raise PackageError(f"{len(leaked)} file(s) of {run_dir} hold the value of a secret set in this environment, in clear: "
                           + "; ".join(leaked[:5]) + (f"; and {len(leaked) - 5} more" if len(leaked) > 5 else "")
                           + ". Nothing was packed: rotate the key, and rebuild the folder's outputs (`lrc report`) "
                             "from a journal that does not hold it")
    if "run/summary.json" not in members:
        raise PackageError(f"{run_dir} has no summary.json: nothing was published yet; run `lrc report` first")
    try:
        summary = json.loads(members["run/summary.json"])
    except ValueError as exc:
        raise PackageError(f"{run_dir / 'summary.json'} is not JSON: {exc}") from None
    if plan["seed"]["policy"] != "public" and seed_file is not None:
        try:
            seed = resolve_seed(plan, seed_file)
        except Refused as exc:
            raise PackageError(str(exc)) from None
        members["seed/held-out.seed"] = (seed + "\n").encode("utf-8")
    elif seed_file is not None:
        raise PackageError("this edition's seed is public and in the lock; do not pass --released-seed")
    members["plan.lock"] = lock_path.read_bytes()
    members["requirements.lock"], hashed = _requirements()
    for ref, rubric in sorted(plan.get("rubrics", {}).items()):
        members[f"rubrics/{ref}.json"] = _canonical(rubric)
    members.update(_source_files(lock))
    try:
        records = journal_records(members["run/journal.jsonl"], lock, run_dir / "journal.jsonl")
    except JournalError as exc:
        raise PackageError(f"{exc}; nothing was packed") from None
    members["adjudications.json"] = adjudications(records)
    prefix = f"{plan['edition']['ref']}-{lock['root_digest'].split(':')[-1][:12]}"
    members["README.md"] = texts.readme(lock, prefix).encode("utf-8")
    members["MODEL_CARD.md"] = texts.model_card(lock, summary, members, hashed).encode("utf-8")
    members[MANIFEST] = _canonical(manifest(members, lock, prefix, summary, hashed))
    data = _tar_bytes(members, prefix)
    from lrc.runtime import filebytes

    try:
        filebytes.put_output(out, data, inputs=(lock_path,), inside=(run_dir,))
    except OSError as exc:
        raise PackageError(f"cannot write {out}: {exc.strerror or exc}") from None
    return Built(out, len(members), len(data), prefix, skipped)


def package_cli(run_dir: Path, out: Path, plan_path: Path | None = None, seed_file: Path | None = None) -> int:
    from lrc.runtime.redact import build_redactor

    redact = build_redactor()
    try:
        built = build(run_dir, out, plan_path, seed_file)
    except PackageError as exc:
        print(redact(f"lrc package: {exc}"), file=sys.stderr)
        return EXIT_REFUSED
    print(f"wrote {built.path} ({built.size:,} bytes, {built.members} members under {built.prefix}/)")
    if built.skipped:
        shown = ", ".join(built.skipped[:10]) + (f" and {len(built.skipped) - 10} more" if len(built.skipped) > 10 else "")
        print(redact(f"not packed (not outputs lrc writes): {shown}"))
    print(f"verify it offline with: lrc verify {built.path}")
    return EXIT_OK


# -- reading (hostile input) --------------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    members: int = 2_000_000
    member_bytes: int = 4 << 30
    total_bytes: int = 32 << 30
    name_chars: int = 1024
    manifest_bytes: int = 256 << 20  # a 100,000-run package lists ~300,000 members in ~60 MB


class _Capped(io.RawIOBase):
    """A reader of at most `cap` bytes of decompressed data: a gzip bomb stops here."""

    def __init__(self, inner, cap: int):
        self.inner, self.left = inner, cap

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self.left <= 0:
            raise ArchiveRefused("the archive decompresses to more than the size limit (a decompression bomb?)")
        view = memoryview(buf)[: min(len(buf), self.left)]
        data = self.inner.read(len(view))
        view[: len(data)] = data
        self.left -= len(data)
        return len(data)


def _stream(path: Path, limits: Limits):
    from lrc.runtime import filebytes

    try:  # opened without blocking, a regular file only: a FIFO given as the package was waited on
        fd, _ = filebytes.open_regular(path, None)
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except filebytes.NotRegular as exc:
        raise ArchiveRefused(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise ArchiveRefused(f"cannot read {path}: {exc.strerror or exc}") from None
    if fh.read(2) != b"\x1f\x8b":
        fh.close()
        raise ArchiveRefused(f"{path} is not a gzip file; a package is the tar.gz `lrc package` writes")
    fh.seek(0)
    # The cap covers the data, every header and the end blocks of the largest honest package.
    capped = io.BufferedReader(_Capped(gzip.GzipFile(fileobj=fh, mode="rb"), limits.total_bytes + limits.members * 2048 + (1 << 20)))
    try:
        return fh, tarfile.open(fileobj=capped, mode="r|")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        fh.close()
        raise ArchiveRefused(f"the archive is damaged: {exc}") from None


_BAD_CHARS = re.compile(r"[\x00-\x1f\\:]")


def _check_name(name: str, limits: Limits) -> str | None:
    if not name or len(name) > limits.name_chars:
        return "an empty or over-long name"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "an absolute path"
    if _BAD_CHARS.search(name):
        return "a control character, backslash or colon in its name"
    parts = name.split("/")
    if ".." in parts:
        return "a '..' component (path traversal)"
    if any(p in ("", ".") for p in parts):
        return "an empty or '.' path component"
    return None


def _members(tar: tarfile.TarFile, limits: Limits) -> Iterator[tarfile.TarInfo]:
    count = total = 0
    prefix: str | None = None
    seen: set[str] = set()
    try:
        for info in tar:
            count += 1
            if count > limits.members:
                raise ArchiveRefused(f"the archive has more than {limits.members:,} members (a decompression bomb?)")
            what = _check_name(info.name, limits)
            if what is not None:
                raise ArchiveRefused(f"member {info.name[:200]!r} has {what}; refusing the archive")
            if not info.isreg() or info.issparse():
                kind = ("a symbolic link" if info.issym() else "a hard link" if info.islnk() else "a folder" if info.isdir()
                        else "a device or fifo" if (info.ischr() or info.isblk() or info.isfifo()) else "not a regular file")
                raise ArchiveRefused(f"member {info.name[:200]!r} is {kind}; a package holds regular files only; refusing the archive")
            if info.size > limits.member_bytes:
                raise ArchiveRefused(f"member {info.name[:200]!r} declares {info.size:,} bytes, over the {limits.member_bytes:,}-byte "
                                     f"limit (a decompression bomb?)")
            total += info.size
            if total > limits.total_bytes:
                raise ArchiveRefused(f"the archive's members add up to more than {limits.total_bytes:,} bytes (a decompression bomb?)")
            top = info.name.split("/", 1)[0]
            if prefix is None:
                prefix = top
            if top != prefix or "/" not in info.name:
                raise ArchiveRefused(f"member {info.name[:200]!r} is outside the package folder {prefix}/")
            key = info.name.casefold()
            if key in seen:
                raise ArchiveRefused(f"member {info.name[:200]!r} appears twice")
            seen.add(key)
            yield info
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveRefused(f"the archive is damaged: {exc}") from None


def _listed(tar: tarfile.TarFile, info: tarfile.TarInfo, limits: Limits) -> set[str]:
    """The member paths the package's MANIFEST.json lists; `info` must be that file, the
    archive's first member (`_tar_bytes` writes it first)."""
    if info.name.split("/", 1)[1] != MANIFEST:
        raise ArchiveRefused(f"its first member is {info.name[:200]!r}, not {MANIFEST}: this is not a package `lrc package` "
                             f"wrote; refusing the archive")
    if info.size > limits.manifest_bytes:
        raise ArchiveRefused(f"{MANIFEST} declares {info.size:,} bytes, over the {limits.manifest_bytes:,}-byte limit")
    try:
        data = tar.extractfile(info).read()  # type: ignore[union-attr]
        doc = json.loads(data)
        listed = {entry["path"] for entry in doc["members"]}
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveRefused(f"the archive is damaged: {exc}") from None
    except (ValueError, RecursionError, KeyError, TypeError) as exc:
        raise ArchiveRefused(f"{MANIFEST} is not a package manifest ({type(exc).__name__}); refusing the archive") from None
    if not all(isinstance(p, str) for p in listed):
        raise ArchiveRefused(f"{MANIFEST} lists a member path that is not text; refusing the archive")
    return listed


def scan(path: Path, limits: Limits = Limits()) -> list[tuple[str, int]]:
    """(name, size) of every member, every header checked; nothing is written.

    The first member must be the package's MANIFEST.json and every later one listed in it: an
    archive of members `lrc package` did not pack (600,000 empty files, say) is refused at the
    first of them, as it streams by, instead of being extracted whole and then found to differ."""
    fh, tar = _stream(path, limits)
    found: list[tuple[str, int]] = []
    listed: set[str] | None = None
    with fh, tar:
        for info in _members(tar, limits):
            if listed is None:
                listed = _listed(tar, info, limits)
            elif info.name.split("/", 1)[1] not in listed:
                raise ArchiveRefused(f"member {info.name[:200]!r} is not listed in {MANIFEST}: not a file `lrc package` "
                                     f"packed; refusing the archive")
            found.append((info.name, info.size))
    if not found:
        raise ArchiveRefused(f"{path} holds no files")
    return found


def extract(path: Path, dest: Path, limits: Limits = Limits()) -> Path:
    """Check every header (`scan`), then write the members below `dest` (a fresh, empty folder);
    the package folder inside it is returned."""
    names = scan(path, limits)
    fh, tar = _stream(path, limits)
    prefix = names[0][0].split("/", 1)[0]
    with fh, tar:
        try:
            for info in _members(tar, limits):
                target = dest / PurePosixPath(info.name)
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(info)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                written = 0
                with os.fdopen(fd, "wb") as sink:
                    while chunk := source.read(1 << 20):
                        written += len(chunk)
                        if written > info.size:
                            raise ArchiveRefused(f"member {info.name[:200]!r} holds more than it declares")
                        sink.write(chunk)
                if written != info.size:
                    raise ArchiveRefused(f"member {info.name[:200]!r} is truncated (the archive is damaged)")
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise ArchiveRefused(f"the archive is damaged: {exc}") from None
    return dest / prefix
