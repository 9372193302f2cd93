"""How one `lrc execute` is operated: everything the operator chooses that the lock does not freeze.

The lock holds what defines the measurement (models and sampling, prices, prompts, tools,
items, code, seed, n, repetitions, systems). How a run is *operated* -- concurrency,
endpoints, key variables, timeouts and retry budget, which subset of the runs to make, a
spending budget, a response cache, a shard -- is chosen per execute, from a run profile and
flags over documented defaults. Nothing here enters a digest, and nothing here can change
what a finished run's result is; a subset, a limit or a shard only changes *which* runs are
made (such an output folder is partial, see `RunOptions.partial`).

`RunOptions` is the one value `lrc execute` passes down; the command line (and a profile
loaded and validated by the compiler's diagnostics) build it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import Any, Mapping

from lrc.runtime.models.infra import ENV, InfraSettings, parse_setting


@dataclass(frozen=True)
class ModelEndpoint:
    """Where and how one model is called in this execute (none of it is measured)."""

    api_base: str | None = None  # None: the provider's default endpoint
    api_key_env: str | None = None  # None: litellm's default variable for the provider
    max_concurrency: int = 4

    def where(self, model_id: str) -> str:
        """The endpoint, as messages name it."""
        return self.api_base or f"the {model_id.split('/', 1)[0]} provider's default endpoint"


#: Where an effective setting came from, strongest first.
SOURCES = ("flag", "profile", "env", "default")
ENDPOINT_FIELDS = ("api_base", "api_key_env", "max_concurrency")


@dataclass(frozen=True)
class RunOptions:
    """The operating choices of one `lrc execute` (see the module docstring)."""

    settings: InfraSettings = field(default_factory=InfraSettings)
    endpoints: dict[str, ModelEndpoint] = field(default_factory=dict)  # model id -> endpoint; default ModelEndpoint()
    models: tuple[str, ...] | None = None  # --models: only these models' runs
    workloads: tuple[str, ...] | None = None  # --workloads: only these workloads' runs
    limit: int | None = None  # --limit N: only the first N items of each cell
    shard: tuple[int, int] | None = None  # --shard i/N (1-based i)
    budget: Decimal | None = None  # --budget USD: no call is started that could take the total above it
    cache_dir: Path | None = None  # --cache DIR: the content-addressed response cache
    cache_sampled: bool = False  # reuse cached responses for temperature > 0 as well
    outside_window: bool = False  # --outside-window: make runs after the edition's window closed (runtime/window.py)
    seed_file: Path | None = None
    progress: bool = True
    profile_path: Path | None = None  # the run profile these settings came from, if any
    sources: dict[str, str] = field(default_factory=dict)  # "max_attempts" | "models/<id>/<field>" -> flag|profile|env

    def endpoint(self, model_id: str) -> ModelEndpoint:
        return self.endpoints.get(model_id, ModelEndpoint())

    def unknown_models(self, plan_models: Any) -> list[str]:
        """Models the profile or a flag sets that the plan does not run (an error: nothing is run)."""
        return sorted(m for m in self.endpoints if m not in plan_models)

    def operation(self, plan_models: Any) -> dict[str, Any]:
        """The effective operating settings of this execute, each with its source (flag,
        profile, env, default): journaled once per execute, written into every run manifest
        and summary.json under `operation`. Only a key variable's NAME is ever in it."""
        settings = {f.name: {"value": _plain(getattr(self.settings, f.name)), "source": self.sources.get(f.name, "default")}
                    for f in fields(InfraSettings)}
        models = {}
        for model in sorted(plan_models):
            endpoint = self.endpoint(model)
            models[model] = {name: {"value": getattr(endpoint, name), "source": self.sources.get(f"models/{model}/{name}", "default")}
                             for name in ENDPOINT_FIELDS}
        chosen = {"models": None if self.models is None else list(self.models),
                  "workloads": None if self.workloads is None else list(self.workloads),
                  "limit": self.limit, "shard": None if self.shard is None else f"{self.shard[0]}/{self.shard[1]}"}
        return {"profile": None if self.profile_path is None else str(self.profile_path), "settings": settings, "models": models,
                "selection": chosen, "budget_usd": None if self.budget is None else str(self.budget),
                "cache": None if self.cache_dir is None else {"dir": str(self.cache_dir), "sampled": self.cache_sampled},
                **({"outside_window": True} if self.outside_window else {})}

    @property
    def partial(self) -> bool:
        """Does this execute make only part of the plan's runs? (A subset, a limit or a shard:
        such a folder never yields rate-card lines or a qualifying verdict.)"""
        return self.models is not None or self.workloads is not None or self.limit is not None or self.shard is not None


def _plain(value: Any) -> Any:
    """A setting as JSON without floats (seconds as decimal strings: 28800.0 -> "28800", 0.05 ->
    "0.05"), like every figure lrc writes; other values unchanged."""
    if isinstance(value, float):
        return format(Decimal(repr(value)).normalize(), "f")
    return value


class OptionsError(ValueError):
    """An operating setting or flag that cannot be used (unknown model, bad number): exit 1, nothing run."""


def from_request(request: dict | None = None, env: Mapping[str, str] | None = None) -> RunOptions:
    """The options of one execute from the command line's request: `request` holds the parsed
    flags by name (`seed_file`, `progress`, ...), under `profile` a run profile already
    validated against `schemas/run-profile.schema.json` by the caller (plain data), and under
    `endpoint_flags` the per-model flags as `{setting: {model: value}}`. Precedence, per
    setting: flags, then the profile, then the `LRC_*` environment variables, then the
    documented defaults. Every value is checked again here (the runtime trusts no caller)."""
    request = dict(request or {})
    env = os.environ if env is None else env
    profile = request.get("profile") or {}
    if not isinstance(profile, dict):
        raise OptionsError("the run profile is not a mapping")
    sources: dict[str, str] = {}
    values: dict[str, Any] = {}
    try:
        for f in fields(InfraSettings):
            name, var = f.name, ENV[f.name]
            if profile.get(name) is not None:
                values[name], sources[name] = parse_setting(name, profile[name], f"{name} (run profile)"), "profile"
            elif (env.get(var) or "").strip():
                values[name], sources[name] = parse_setting(name, env[var], var), "env"
        settings = InfraSettings(**values)
    except ValueError as exc:
        raise OptionsError(f"bad setting: {exc}") from exc
    per_model: dict[str, dict[str, Any]] = {}
    for model, entry in sorted((profile.get("models") or {}).items()):
        if not isinstance(entry, dict):
            raise OptionsError(f"run profile: models.{model} is not a mapping")
        for name, value in entry.items():
            if name not in ENDPOINT_FIELDS:
                raise OptionsError(f"run profile: models.{model}.{name} is not an operating setting")
            per_model.setdefault(model, {})[name] = value
            sources[f"models/{model}/{name}"] = "profile"
    for name, by_model in sorted((request.get("endpoint_flags") or {}).items()):
        if name not in ENDPOINT_FIELDS:
            raise OptionsError(f"unknown per-model flag setting {name!r}")
        for model, value in by_model.items():
            per_model.setdefault(model, {})[name] = value
            sources[f"models/{model}/{name}"] = "flag"
    endpoints = {model: _endpoint(model, entry) for model, entry in per_model.items()}
    budget = request.get("budget")
    if budget is not None:
        if isinstance(budget, (float, bool)) or not isinstance(budget, (str, int, Decimal)):
            raise OptionsError(f"--budget must be a decimal amount of USD, got {budget!r}")
        try:
            budget = Decimal(budget)
        except ArithmeticError:
            raise OptionsError(f"--budget must be a decimal amount of USD, got {budget!r}") from None
        if not budget.is_finite() or budget < 0:
            raise OptionsError(f"--budget must be a finite amount of USD, zero or more, got {request.get('budget')!r}")
    profile_path = request.get("profile_path")
    cache_dir, cache_sampled = request.get("cache_dir"), bool(request.get("cache_sampled"))
    if cache_sampled and cache_dir is None:
        raise OptionsError("--cache-sampled needs --cache DIR (the cache whose sampled responses may be reused)")
    return RunOptions(settings=settings, endpoints=endpoints, seed_file=request.get("seed_file"),
                      progress=request.get("progress", True), profile_path=Path(profile_path) if profile_path else None,
                      sources=sources,
                      models=_names(request.get("models"), "--models"), workloads=_names(request.get("workloads"), "--workloads"),
                      limit=_limit(request.get("limit")), shard=_shard(request.get("shard")),
                      cache_dir=None if cache_dir is None else Path(cache_dir), cache_sampled=cache_sampled,
                      budget=budget, outside_window=bool(request.get("outside_window")))


def _endpoint(model: str, entry: dict[str, Any]) -> ModelEndpoint:
    import re

    base, key_env, limit = entry.get("api_base"), entry.get("api_key_env"), entry.get("max_concurrency", 4)
    if base is not None and (not isinstance(base, str) or not re.match(r"https?://\S+$", base)):
        raise OptionsError(f"{model}: api_base must be an http:// or https:// URL")
    if base is not None and not plain_endpoint(base):
        raise OptionsError(f"{model}: api_base may hold no user, password, query or fragment (the URL is not shown: it may "
                           f"hold a credential, and it would be recorded in every run manifest); name the key's variable "
                           f"in api_key_env instead")
    if key_env is not None and (not isinstance(key_env, str) or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", key_env)):
        raise OptionsError(f"{model}: api_key_env must be an environment variable NAME (the value is not shown)")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1024:
        raise OptionsError(f"{model}: max_concurrency must be a whole number from 1 to 1024, not {limit!r}")
    return ModelEndpoint(api_base=base, api_key_env=key_env, max_concurrency=limit)


def plain_endpoint(url: str) -> bool:
    """Is `url` an endpoint that can be recorded as it is: a host and a path, with no user,
    password, query or fragment? Every run manifest, summary.json and message names the
    endpoint, so a key written into its URL (`https://user:KEY@proxy/v1`, `...?api-key=KEY`)
    would be published with the run; the key's place is the variable `api_key_env` names.
    Mirrors the pattern of schemas/run-profile.schema.json, which the compiler checks first."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.netloc) and "@" not in parts.netloc
            and not parts.query and not parts.fragment and "?" not in url and "#" not in url)


def _names(value, flag: str) -> tuple[str, ...] | None:
    """A subset flag's names in the order given, duplicates dropped; None when not given."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split(",")
    names = tuple(dict.fromkeys(str(v).strip() for v in value))
    if not names or any(not n for n in names):
        raise OptionsError(f"{flag} takes a comma-separated list of ids without empty entries")
    return names


def _limit(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionsError(f"--limit takes a whole number of items of at least 1, got {value!r}")
    return value


def _shard(value) -> tuple[int, int] | None:
    """`--shard i/N` (1 <= i <= N), as the text or as the pair (i, N)."""
    if value is None:
        return None
    given = value
    if isinstance(value, str):
        left, sep, right = value.partition("/")
        try:
            value = (int(left), int(right)) if sep else None
        except ValueError:
            value = None
    if (not isinstance(value, tuple) or len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
            or not 1 <= value[0] <= value[1]):
        shown = given if isinstance(given, str) else "/".join(map(str, given)) if isinstance(given, tuple) else repr(given)
        raise OptionsError(f"--shard takes i/N with 1 <= i <= N (e.g. 2/3), got {shown}")
    return value
