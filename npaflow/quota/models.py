"""A GPU quota pool's documents: its configuration, leases, waiters, and what it answers (DESIGN 21).

The pool's state lives in its Temporal workflow (`NpaflowQuotaPool`, one per
pool); these models are what crosses its boundary and what it carries across
continue-as-new.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, field_validator

from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.quota.leases import LeaseId, LeaseState, LeaseVerdict

#: Pool and team names become workflow ids and metric labels.
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}\Z")  # \Z: "$" would let a final newline in
#: An accelerator type (`H100`, `A100-80GB`, `tpu-v5e-8`): what a wave's resources count GPUs of.
ACCELERATOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
MAX_GPUS = 1_000_000
MIN_PRIORITY, MAX_PRIORITY, DEFAULT_PRIORITY = 1, 5, 3
DEFAULT_TEAM = "default"
GpuCount = Annotated[int, Field(ge=0, le=MAX_GPUS)]


def name_problem(kind: str, name: str) -> str:
    """Why `name` cannot name a pool or team ("" when it can)."""
    if NAME.match(name):
        return ""
    rule = "1-63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
    return f"{kind} {name!r} must be {rule}"


def accelerator_problem(accelerator: str) -> str:
    """Why `accelerator` cannot be a pool's type ("" when it can, or when it is "" for every type).

    A pool counts the GPUs of waves whose resources name this type (`H100`,
    `A100-80GB`); `H100:8` names none, so such a pool would limit nothing.
    """
    if not accelerator or ACCELERATOR.match(accelerator):
        return ""
    kind, colon, _ = accelerator.partition(":")
    if colon:
        return (
            f"accelerator {accelerator!r} carries a count: name the type only ({kind.strip()!r}); "
            "--gpus is the pool's size"
        )
    return f"accelerator {accelerator!r} is not an accelerator type name (letters, digits, '.', '_' or '-')"


def _team_name(value: str) -> str:
    if problem := name_problem("team", value):
        raise ValueError(problem)
    return value


#: A team's name: it becomes a metric label and a fair-share key.
TeamName = Annotated[str, AfterValidator(_team_name)]


class PoolConfig(BaseModel):
    """What `npaflow quota set` declares: capacity, the accelerator it counts, team weights."""

    model_config = FROZEN

    gpus: GpuCount
    accelerator: str = Field(default="", max_length=64)  # "" = every accelerator type counts
    weights: dict[str, float] = Field(default_factory=dict)  # team -> weight (default 1)

    @field_validator("weights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        for team, weight in weights.items():
            if problem := name_problem("team", team):
                raise ValueError(problem)
            if not 0 < weight <= 1000:
                raise ValueError(f"team {team!r}: a weight is a number in (0, 1000], got {weight}")
        return weights

    def weight(self, team: str) -> float:
        """The team's weight in fair share (1 unless declared)."""
        return self.weights.get(team, 1.0)


class QuotaClaim(BaseModel):
    """How a run joins a pool: `submit --quota-pool P --team T --priority 1..5` ("" = the workers' pool)."""

    model_config = FROZEN

    pool: str = ""
    team: TeamName = DEFAULT_TEAM
    priority: int = Field(default=DEFAULT_PRIORITY, ge=MIN_PRIORITY, le=MAX_PRIORITY)

    @field_validator("pool")
    @classmethod
    def _pool(cls, value: str) -> str:
        if value and (problem := name_problem("quota pool", value)):
            raise ValueError(problem)
        return value


class LeaseRequest(BaseModel):
    """One wave asking for its GPUs; `lease_id` makes a retried ask the same ask."""

    model_config = FROZEN

    lease_id: LeaseId
    run_id: RunId
    wave: str  # the wave's key, for people
    team: TeamName = DEFAULT_TEAM
    priority: int = Field(default=DEFAULT_PRIORITY, ge=MIN_PRIORITY, le=MAX_PRIORITY)
    # type -> GPUs the wave holds at once; bounded, so no ask (a hand-sent one included)
    # can make the pool's bookkeeping fail and stall every run that uses it
    accelerators: dict[str, GpuCount] = Field(default_factory=dict)

    def gpus_for(self, accelerator: str) -> int:
        """GPUs a pool of `accelerator` ("" = any type) counts for this wave."""
        wanted = accelerator.lower()
        return sum(n for kind, n in self.accelerators.items() if not wanted or kind.lower() == wanted)


class Lease(BaseModel):
    """A request the pool holds: granted (`since` set) or waiting (`asked_at`, `order`)."""

    model_config = FROZEN

    request: LeaseRequest
    gpus: GpuCount  # what this pool counts of the request
    asked_at: float  # workflow time, epoch seconds
    order: int  # first come, first served among equals
    since: float = 0.0  # granted at (0 while waiting)
    charged: float = 0.0  # GPU-seconds its team was charged for it while it was held

    @property
    def state(self) -> LeaseState:
        """Waiting or held (a lease that ended is no longer in the book)."""
        return LeaseState.HELD if self.since else LeaseState.WAITING


class LeaseAnswer(BaseModel):
    """The pool's answer to an ask: granted now, or where the wave waits."""

    model_config = FROZEN

    lease_id: LeaseId = LeaseId("")
    granted: bool
    position: int = 0  # 1 = next in line
    in_use: int = 0
    capacity: int = 0
    refused: str = ""  # the wave can never fit, or the pool is being deleted

    @property
    def verdict(self) -> LeaseVerdict:
        """Granted, waiting in line, or refused (the three fields say it in one word)."""
        if self.refused:
            return LeaseVerdict.REFUSED
        return LeaseVerdict.GRANTED if self.granted else LeaseVerdict.WAITING


class TeamUsage(BaseModel):
    """One team's GPUs held now, waiting, and decayed GPU-hours (what fair share compares)."""

    model_config = FROZEN

    team: str
    in_use: int = 0
    waiting: int = 0
    gpu_hours: float = 0.0
    weight: float = 1.0


class PoolStatus(BaseModel):
    """`npaflow quota status POOL`: capacity, use by team, holders, waiters in the order served."""

    model_config = FROZEN

    pool: str
    config: PoolConfig
    in_use: int
    holders: list[Lease] = Field(default_factory=list)
    waiting: list[Lease] = Field(default_factory=list)
    teams: list[TeamUsage] = Field(default_factory=list)
    deleting: bool = False


class PoolCarry(BaseModel):
    """A pool as it continues as new: its config, leases and fair-share ledger."""

    model_config = FROZEN

    config: PoolConfig
    holders: list[Lease] = Field(default_factory=list)
    waiting: list[Lease] = Field(default_factory=list)
    used: dict[str, float] = Field(default_factory=dict)  # team -> decayed GPU-seconds
    used_at: float = 0.0
    order: int = 0


class ReleaseRun(BaseModel):
    """`npaflow quota release POOL RUN`: free the leases of a run that ended without its code."""

    model_config = FROZEN

    run_id: str = Field(min_length=1, max_length=1000)
    force: bool = False  # release even while the ledger says its jobs may still run


class ReleaseAnswer(BaseModel):
    """What a release did: the waves whose leases went, the jobs still running, or why not."""

    model_config = FROZEN

    released: list[str] = Field(default_factory=list)  # wave keys
    live_jobs: list[str] = Field(default_factory=list)  # what the run's ledger holds in flight
    refused: str = ""


class SpentRelease(BaseModel):
    """A wave gives its lease back with what its attempts spent (their GPU-hours, one clock)."""

    model_config = FROZEN

    lease_id: LeaseId
    gpu_hours: float = Field(ge=0, le=1e9)
