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

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from lrc.runtime.models.infra import InfraSettings


@dataclass(frozen=True)
class ModelEndpoint:
    """Where and how one model is called in this execute (none of it is measured)."""

    api_base: str | None = None  # None: the provider's default endpoint
    api_key_env: str | None = None  # None: litellm's default variable for the provider
    max_concurrency: int = 4


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
    seed_file: Path | None = None
    progress: bool = True
    profile_path: Path | None = None  # the run profile these settings came from, if any

    def endpoint(self, model_id: str) -> ModelEndpoint:
        return self.endpoints.get(model_id, ModelEndpoint())

    @property
    def partial(self) -> bool:
        """Does this execute make only part of the plan's runs? (A subset, a limit or a shard:
        such a folder never yields rate-card lines or a qualifying verdict.)"""
        return self.models is not None or self.workloads is not None or self.limit is not None or self.shard is not None


class OptionsError(ValueError):
    """An operating setting or flag that cannot be used (unknown model, bad number): exit 1, nothing run."""


def from_request(request: dict | None = None) -> RunOptions:
    """The options of one execute from the command line's request: `request` holds the parsed
    flags by name (`seed_file`, `progress`, ...) and, under `profile`, a run profile already
    validated against `schemas/run-profile.schema.json` by the caller. Precedence: flags, then
    the profile, then the `LRC_*` environment variables, then the documented defaults."""
    request = dict(request or {})
    try:
        settings = InfraSettings.from_env()
    except ValueError as exc:
        raise OptionsError(f"bad setting: {exc}") from exc
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
    return RunOptions(settings=settings, seed_file=request.get("seed_file"), progress=request.get("progress", True),
                      budget=budget)
