"""What the workflow and the stage-cache activities say to each other (DESIGN 20, docs/cache.md).

The workflow asks `cache_lookup` before launching a wave with cached steps; the
activity keys every cached step from what it reads in storage, verifies each
candidate entry object by object, and copies each hit's outputs into this run's
own URIs: a wave all of whose steps hit is served, one with misses launches
only the steps that missed. After a launched wave succeeded and
its outputs were verified, `cache_store` writes one entry per cached step.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, model_validator

from npaflow.cache import KeyComponents
from npaflow.catalog.models import ToolCatalog
from npaflow.images import ImageBinding
from npaflow.presets import FROZEN
from npaflow.runtime.ledger.records import CachedStep
from npaflow.traversal.models import Wave


class CacheMode(StrEnum):
    """How a run uses the stage cache (`submit --cache`)."""

    ON = "on"  # read verified entries, write new ones
    REFRESH = "refresh"  # run every cached step and overwrite its entry
    OFF = "off"  # neither read nor write


class StepKey(BaseModel):
    """One cached step's key and the components it was computed from."""

    model_config = FROZEN

    state: str
    key: str
    components: KeyComponents
    item: str = ""  # a fan-out member's item key: members of one template share their state


class CacheLookupInput(BaseModel):
    """Key the wave's cached steps and, in ON mode, serve the wave from verified entries."""

    model_config = FROZEN

    run_id: str
    wave: Wave
    catalog: ToolCatalog
    cache_root: str
    scope: str
    mode: CacheMode
    secret_env: tuple[str, ...] = ()
    infra: str = ""
    images: ImageBinding = Field(default_factory=ImageBinding)  # so a key names the digest, not the tag
    flight_queue: str = ""  # set: on a miss, ask the first key's flight (its workflow runs here)


class CacheLookupResult(BaseModel):
    """Each cached step's key and verdict; `served` when no job needs to run."""

    model_config = FROZEN

    keys: tuple[StepKey, ...]
    steps: tuple[CachedStep, ...]
    served: bool = False
    flying: str = ""  # the key whose flight this lookup asked for ("" when none)
    holding: bool = False  # and the run holds it already (no other run had it)
    holder: str = ""  # else the run that holds it ("" when the flight did not say)

    def hit_states(self) -> frozenset[tuple[str, str]]:
        """The (state, item) members whose verified outputs were copied into this run's URIs."""
        return frozenset((step.state, step.item) for step in self.steps if step.hit)

    def missed_keys(self) -> tuple[StepKey, ...]:
        """The keys of the cached steps that launch (flown, then stored after their success)."""
        hits = self.hit_states()
        return tuple(key for key in self.keys if (key.state, key.item) not in hits)

    def unserved(self, wave: Wave) -> Wave:
        """The wave as it launches: without the steps the cache served (same key and job name)."""
        hits = self.hit_states()
        if not hits:
            return wave
        return wave.model_copy(
            update={"steps": tuple(s for s in wave.steps if (s.state, s.item) not in hits)}
        )


class CacheStoreInput(BaseModel):
    """Write an entry per cached step of a wave that succeeded with verified outputs."""

    model_config = FROZEN

    run_id: str
    wave: Wave
    wave_key: str
    job_id: str
    gpu_hours: float = Field(ge=0)
    cache_root: str
    scope: str
    keys: tuple[StepKey, ...]
    created_at: str
    release_flights: bool = False  # give the keys' flights back once the entries are written


class CacheStoreResult(BaseModel):
    """Which steps' entries were written, and why any was not; whether the flights were given back."""

    model_config = FROZEN

    steps: tuple[CachedStep, ...]
    released: bool = False


#: The per-key flight workflow, its signals, and the signal it answers a run with.
FLIGHT_WORKFLOW_TYPE = "NpaflowCacheFlight"
FLIGHT_ASK_UPDATE = "ask"
FLIGHT_RELEASE_SIGNAL = "release"
FLIGHT_GRANTED_SIGNAL = "cache_flight_granted"
FLIGHT_HOLDER_QUERY = "holder"


def flight_id(scope_dir: str, key: str) -> str:
    """One flight workflow per (scope, key): runs that reach the same key meet there."""
    return f"npaflow-cache-flight-{scope_dir}-{key.removeprefix('sha256:')}"


class FlightTicket(BaseModel):
    """A run asking for (or giving back) one key's flight."""

    model_config = FROZEN

    run_id: str
    key: str
    waited: bool = False  # granted after another run held the key: look it up again first


class FlightQueue(BaseModel):
    """A key's flight as it continues as new: who holds it, who waits, who was passed over."""

    model_config = FROZEN

    holder: str = ""
    waiting: list[str] = Field(default_factory=list)
    passed_over: list[str] = Field(default_factory=list)


class RequestFlightInput(BaseModel):
    """Ask the key's flight (update-with-start): the answer says whether the run holds it now."""

    model_config = FROZEN

    flight_id: str
    ticket: FlightTicket
    task_queue: str


class FlightAnswer(BaseModel):
    """A flight's answer to a run's ask: the run holds the key now, or waits behind `holder`."""

    model_config = FROZEN

    holding: bool
    holder: str = ""  # the run holding the key while this one waits ("" when the flight did not say)

    @model_validator(mode="before")
    @classmethod
    def _from_bool(cls, value: object) -> object:
        """Runs recorded before the holder was named got a bare bool: their histories replay."""
        return {"holding": value} if isinstance(value, bool) else value
