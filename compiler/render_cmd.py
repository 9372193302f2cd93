"""`lrc render WORKLOAD --system S [--item N]`: exactly the messages that will be sent, from the lock.

The lock (`generated/<edition>/plan.lock`) is verified like `lrc execute` verifies it. Without
`--item` the locked sample render is shown; with `--item N` item N is generated from the
locked seed by the locked generator and rendered by the runtime's own `render_messages`, so
the text is byte-identical to what `execute` sends. A held-out edition needs `--seed-file`.
The runtime is imported lazily: `lrc compile` never loads it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrc.compiler.refs import did_you_mean, parse_ref

EXIT_PROBLEMS, EXIT_USAGE, EXIT_REFUSED = 1, 2, 4


class RenderFailed(Exception):
    """What `lrc render` cannot show, as one diagnostic (code, message, hint) and an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_PROBLEMS, code: str = "LRC8202", hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.code = code
        self.hint = hint


@dataclass
class Rendered:
    edition: str
    lock: str
    root_digest: str
    workload: str
    system: str
    model: str
    source: str  # "sample" | "item"
    messages: list[dict[str, Any]]
    item: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"command": "render", "ok": True, "error": None, "edition": self.edition, "lock": self.lock,
                "root_digest": self.root_digest, "workload": self.workload, "system": self.system, "model": self.model,
                "source": self.source, "item": self.item, "messages": self.messages, "tools": self.tools, "notes": self.notes}


def editions_with_locks(root: Path) -> list[str]:
    """Every edition with something at generated/<edition>/plan.lock -- whatever it is: a FIFO
    or a link there is the lock loader's to refuse (exit 4), never a reason to render another
    edition without a word (a FIFO demo lock silently rendered 2026-12)."""
    base = root / "generated"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and os.path.lexists(p / "plan.lock"))


def pick_edition(root: Path, edition: str | None) -> str:
    found = editions_with_locks(root)
    if edition is not None:
        if edition not in found:
            guess = did_you_mean(edition, found)
            raise RenderFailed(f"no lock for edition '{edition}' (generated/{edition}/plan.lock)"
                               + (f"; did you mean '{guess}'?" if guess else "; run `lrc compile`"), code="LRC8201")
        return edition
    if len(found) == 1:
        return found[0]
    if "demo" in found:
        return "demo"
    if not found:
        raise RenderFailed("generated/ holds no plan.lock; run `lrc compile` first", code="LRC8201")
    raise RenderFailed(f"several editions are compiled ({', '.join(found)}); choose one with --edition", EXIT_USAGE, code="LRC8201")


def _pick_workload(plan: dict[str, Any], name: str) -> str:
    refs = sorted(plan["workloads"])
    if name in plan["workloads"]:
        return name
    by_id = [r for r in refs if plan["workloads"][r]["spec"]["id"] == name]
    if len(by_id) == 1:
        return by_id[0]
    parsed = parse_ref(name)
    guess = did_you_mean(name, refs) or (did_you_mean(parsed[0], [plan["workloads"][r]["spec"]["id"] for r in refs]) if parsed else None)
    raise RenderFailed(f"the edition does not run workload '{name}'"
                       + (f"; did you mean {guess}?" if guess else "") + f" (it runs: {', '.join(refs)})")


def _pick_model(plan: dict[str, Any], workload: dict[str, Any], model: str | None) -> tuple[str, list[str]]:
    from lrc.runtime.render_preview import attaches_files

    models = plan["models"]
    if model is not None:
        if model not in models:
            guess = did_you_mean(model, models)
            raise RenderFailed(f"the edition does not run model '{model}'" + (f"; did you mean {guess}?" if guess else "")
                               + f" (it runs: {', '.join(sorted(models))})")
        return model, []
    text_models = sorted(m for m in models if not attaches_files(workload, models[m]))
    file_models = sorted(m for m in models if attaches_files(workload, models[m]))
    chosen = text_models[0] if text_models else file_models[0]
    notes = []
    if text_models and file_models:
        notes.append(f"shown for {chosen} (text input); models that get the file attached instead: "
                     f"{', '.join(file_models)} (pass --model to see theirs)")
    return chosen, notes


def render(root: Path, workload_name: str, system: str, edition: str | None = None, item: int | None = None,
           model: str | None = None, seed_file: Path | None = None) -> Rendered:
    from lrc.runtime import render_preview as preview
    from lrc.runtime.render_preview import Refused, load_verified, resolve_seed

    edition_id = pick_edition(root, edition)
    lock_path = root / "generated" / edition_id / "plan.lock"
    try:
        lock = load_verified(lock_path)
    except Refused as exc:
        raise RenderFailed(str(exc), EXIT_REFUSED, code="LRC8203", hint="`lrc execute` would refuse this lock too; run `lrc compile`") from exc
    plan = lock["plan"]
    ref = _pick_workload(plan, workload_name)
    workload = plan["workloads"][ref]
    runnable = preview.runnable_systems(plan, workload)
    if system not in runnable:
        guess = did_you_mean(system, runnable)
        raise RenderFailed(f"edition {edition_id} runs {ref} with system(s) {', '.join(runnable) or 'none'}, not '{system}'"
                           + (f"; did you mean {guess}?" if guess else ""))
    model_id, notes = _pick_model(plan, workload, model)
    model_entry = plan["models"][model_id]
    tools = workload.get("tools", {}).get(system, [])
    rel_lock = lock_path.relative_to(root).as_posix()
    if item is None:
        if seed_file is not None:
            notes.append("--seed-file is only used with --item")
        messages = preview.sample_messages(workload, system, model_entry)
        return Rendered(edition_id, rel_lock, lock["root_digest"], ref, system, model_id, "sample", messages, None, tools, notes)
    try:
        seed = resolve_seed(plan, seed_file)
    except Refused as exc:
        raise RenderFailed(str(exc), EXIT_REFUSED, code="LRC8203") from exc
    try:
        generated = preview.generate_item(plan, ref, seed, item)
        messages = preview.item_messages(workload, system, generated, model_entry)
    except preview.PreviewError as exc:
        raise RenderFailed(str(exc), code="LRC8204") from exc
    files = {name: preview.file_facts(data) for name, data in sorted(generated.files.items())}
    return Rendered(edition_id, rel_lock, lock["root_digest"], ref, system, model_id, "item", messages,
                    {"index": generated.index, "item_id": generated.item_id, "files": files}, tools, notes)


# -- text output ---------------------------------------------------------------------------------

def _file_part(part: dict[str, Any]) -> str:
    f = part.get("file", {})
    data_url = f.get("file_data")
    if data_url is None:
        return (f"[attachment {f.get('filename')} ({f.get('media_type')}): generated per item; "
                f"pass --item N to see the one sent]")
    header, _, encoded = data_url.partition(",")
    media = header.removeprefix("data:").removesuffix(";base64")
    try:
        data = base64.b64decode(encoded, validate=True)
        facts = f"{len(data):,} bytes, sha256:{hashlib.sha256(data).hexdigest()}"
    except (binascii.Error, ValueError):
        facts = f"{len(encoded):,} base64 characters"
    return f"[attachment {f.get('filename')} ({media}): {facts}; --format json shows the data sent]"


def _block(text: str) -> list[str]:
    out = [text[:-1] if text.endswith("\n") else text]
    if not text.endswith("\n"):
        out.append("\\ no newline at end of message")
    return out


def text(r: Rendered) -> str:
    where = f"item {r.item['index']} ({r.item['item_id']})" if r.item else "locked sample render"
    out = [f"# {r.workload} · {r.system} · {r.model} · {where}",
           f"# edition {r.edition}: {r.lock} {r.root_digest[:19]}",
           "# exactly what `lrc execute` sends" + (" (the runtime's render_messages)" if r.item else
                                                  " for the workload's sample item (compiled sample render)")]
    if r.tools:
        out.append(f"# tools offered: {', '.join(t['function']['name'] for t in r.tools)} (--format json shows their definitions)")
    for note in r.notes:
        out.append(f"# note: {note}")
    for i, message in enumerate(r.messages, start=1):
        content = message["content"]
        out.append(f"----- message {i}: {message['role']} " + "-" * 40)
        if isinstance(content, str):
            out.extend(_block(content))
            continue
        for part in content:
            if part.get("type") == "text":
                out.extend(_block(part["text"]))
            elif part.get("type") == "file":
                out.append(_file_part(part))
            else:
                out.append(f"[{part.get('type')} part]")
    out.append("-" * 60)
    return "\n".join(out) + "\n"
