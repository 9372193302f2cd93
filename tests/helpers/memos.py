"""A private user cache for the tests of lrc's sealed per-user memos (task grades, charts,
forecasts): each test gets its own cache folder and sealing key, so what one test (or the
user's real cache) holds never decides another's hits."""

from __future__ import annotations

from pathlib import Path

import pytest


def private_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str) -> Path:
    """Point the user cache and its key into `tmp_path` (memos on) and return `<cache>/lrc/<folder>`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LRC_CACHE_KEY_FILE", str(tmp_path / "cache" / "lrc" / "cache.key"))
    monkeypatch.delenv("LRC_NO_CACHE", raising=False)
    return tmp_path / "cache" / "lrc" / folder


def entries(folder: Path) -> list[Path]:
    """The memo's entry files, sorted."""
    return sorted(folder.glob("*.bin")) if folder.is_dir() else []


def bump_library_version(monkeypatch: pytest.MonkeyPatch, library: str) -> None:
    """Make `library` report another installed version to the memos' keys."""
    from lrc.runtime.lock import sealed_entries

    real = sealed_entries.metadata.version
    monkeypatch.setattr(sealed_entries.metadata, "version", lambda name: "999" if name == library else real(name))


SEAL_DAMAGE = ("flipped byte", "another user's key", "truncated")
"""The damages every memo must treat as a miss, whatever it stores (`damage_entry`)."""


def damage_entry(path: Path, damage: str, forged: dict) -> None:
    """Damage a memo entry file in one of SEAL_DAMAGE's ways; `forged` is the entry another
    user's key seals in its place."""
    import json

    from lrc.runtime.lock import sealing

    data = path.read_bytes()
    if damage == "flipped byte":
        path.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    elif damage == "another user's key":
        path.write_bytes(sealing.seal(b"k" * 32, json.dumps(forged).encode()))
    elif damage == "truncated":
        path.write_bytes(data[:10])
    else:
        raise ValueError(f"not a seal damage: {damage}")
