"""Wave features as layers: each wraps a wave's way to its attempts, the plain run has none.

A layer is `around(call, next)`: it may answer without calling `next` (the stage
cache serving a wave), narrow the call for the layers inside it (the members that
still launch, what to store after a success), or hold something for as long as
`next` runs (a quota lease, given back however it ends). The executor builds its
list once per run from the request and the spec (workflows_def/run/executor.py):
no cache layer for a spec that caches nothing, no quota layer without a pool, so
a plain run passes through no feature's code at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from npaflow.quota import QuotaClaim
from npaflow.runtime.cache.messages import CacheLookupResult, CacheMode
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.request import RunRequest
from npaflow.traversal import Wave, WaveOutcome

#: Waits out a suspension of the wave (`why`): "" once it may go on, else why it cannot.
Suspend = Callable[[str], Awaitable[str]]
#: Told the attempt that succeeded (the stage cache stores its entries then).
Succeeded = Callable[[int], Awaitable[None]]


@dataclass(frozen=True)
class WaveCall:
    """One wave on its way to its attempts, with what the layers outside learned of it."""

    wave: Wave
    attempt: int
    suspend: Suspend
    reconcile: bool = False  # the attempt crossed the launch boundary: find its job, never launch again
    cache: CacheLookupResult | None = None  # the stage cache's verdicts (members it served stay out)
    succeeded: Succeeded | None = None

    def launching(self) -> Wave:
        """The wave as it launches: the members the cache did not serve."""
        return self.cache.unserved(self.wave) if self.cache else self.wave


Next = Callable[[WaveCall], Awaitable[WaveOutcome]]


class WaveLayer(Protocol):
    """One wave-level feature."""

    async def around(self, call: WaveCall, next_: Next) -> WaveOutcome:
        """Run the wave through this feature; `next_` is every layer inside it, then the attempts."""
        ...


def through(layers: Sequence[WaveLayer], innermost: Next) -> Next:
    """The layers composed around `innermost`, the first of them outermost."""
    composed = innermost
    for layer in reversed(layers):
        composed = _wrapped(layer, composed)
    return composed


def _wrapped(layer: WaveLayer, inner: Next) -> Next:
    async def call(wave_call: WaveCall) -> WaveOutcome:
        return await layer.around(wave_call, inner)

    return call


def caches_a_state(request: RunRequest, loaded: LoadedSpec) -> bool:
    """The stage cache layer is built: the run uses the cache and the spec caches some state."""
    if request.cache is CacheMode.OFF or not loaded.cache_root:
        return False
    return any(state.cache is not None for state in loaded.spec.states.values())


def pool_claim(request: RunRequest, loaded: LoadedSpec) -> QuotaClaim | None:
    """The quota claim of a run that draws from a pool (its own `quota`, or the workers'), else None."""
    claim = request.quota or QuotaClaim()
    pool = claim.pool or loaded.quota_pool  # the workers' NPAFLOW_QUOTA_POOL
    return claim.model_copy(update={"pool": pool}) if pool else None


def fans_out(loaded: LoadedSpec) -> bool:
    """The fan-out layer is built: some group's members come from a list (`forEach:`)."""
    return any(state.for_each is not None for state in loaded.spec.states.values())
