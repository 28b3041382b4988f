"""Each state's live standing, read from the run's ledger (and what the run says it waits for).

A state's phase is its newest wave attempt's status, its iteration how many
loop passes it ran in (sequence loops' keys carry no iteration), (a cache hit reads `cached`,
an attempt not yet holding a job reads `launching`); a state no wave reached is
`pending` while the run is open and `skipped` once it ended. A container stands
for its members: running while one runs, failed when one failed, and so on.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from npaflow.picture.blocks import Block, BlockKind
from npaflow.presets import STRICT
from npaflow.runtime.cache.tally import served_words
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.ledger.models import RuntimeLedger
from npaflow.runtime.vocabulary import LedgerStatus, WaveStatus


class NodePhase(StrEnum):
    """What a node's colour says."""

    PENDING = "pending"
    WAITING = "waiting"  # for a trigger or for quota
    LAUNCHING = "launching"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    CACHED = "cached"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"


class NodeView(BaseModel):
    """One state as the picture shows it (hover and click read the rest)."""

    model_config = STRICT

    state: str
    phase: NodePhase = NodePhase.PENDING
    attempts: int = 0
    iteration: int = 0  # the newest loop iteration reached (0: not in a loop, or not reached)
    job_ids: list[str] = Field(default_factory=list)
    gpu_hours: float = 0.0
    error: str = ""
    detail: str = ""  # "waiting for quota gpu16: ..." while it waits; a cache hit's source
    badge: str = ""  # drawn on the node: a fan-out's members, "6/7 succeeded · 1 failed"


_BY_STATUS = {
    WaveStatus.PENDING: NodePhase.PENDING,
    WaveStatus.RUNNING: NodePhase.RUNNING,
    WaveStatus.SUCCEEDED: NodePhase.SUCCEEDED,
    WaveStatus.FAILED: NodePhase.FAILED,
    WaveStatus.CANCELLED: NodePhase.CANCELLED,
}
#: A container shows the first of these its members show.
_CONTAINER_ORDER = (
    NodePhase.FAILED,
    NodePhase.RUNNING,
    NodePhase.LAUNCHING,
    NodePhase.WAITING,
    NodePhase.CANCELLED,
)


def _phase(wave: WaveAttemptRecord, state: str) -> NodePhase:
    if wave.status is WaveStatus.SUCCEEDED and any(c.hit for c in wave.cache if c.state == state):
        return NodePhase.CACHED
    if wave.status is WaveStatus.RUNNING and not wave.job_id:
        return NodePhase.LAUNCHING
    return _BY_STATUS[wave.status]


def _served(wave: WaveAttemptRecord, state: str) -> str:
    """`from the cache: run c1 job 7 (saved 0.0120 GPU-h)`: where a cached state's outputs came from."""
    return served_words([step for step in wave.cache if step.state == state], "")


def _leaf_views(ledger: RuntimeLedger) -> dict[str, NodeView]:
    views: dict[str, NodeView] = {}
    passes: dict[str, set[int]] = {}  # the waves (by sequence) each state ran in: one per loop pass
    for wave in ledger.waves:
        for member in wave.key.members:
            view = views.setdefault(member.state, NodeView(state=member.state))
            seen = passes.setdefault(member.state, set())
            if wave.key.sequence not in seen and not member.item:  # a fan-out's batches are no passes
                seen.add(wave.key.sequence)
                view.attempts = 0
            iteration = member.iteration or (len(seen) if len(seen) > 1 else 0)
            view.iteration = max(view.iteration, iteration)
            view.attempts = max(view.attempts, wave.attempt)
            view.phase = _phase(wave, member.state)
            view.error = wave.error if view.phase is NodePhase.FAILED else ""
            view.detail = _served(wave, member.state) if view.phase is NodePhase.CACHED else ""
            if wave.job_id and wave.job_id not in view.job_ids:
                view.job_ids.append(wave.job_id)
    for state, usage in ledger.usage.by_state.items():
        if state in views:
            views[state].gpu_hours = round(usage.gpu_hours, 4)
    return views


def _container_view(block: Block, views: dict[str, NodeView]) -> NodeView:
    members = [views[m.name] for m in block.members()]
    phases = {m.phase for m in members}
    phase = next((p for p in _CONTAINER_ORDER if p in phases), None)
    if phase is None:
        done = {NodePhase.SUCCEEDED, NodePhase.CACHED, NodePhase.SKIPPED}
        reached = phases - {NodePhase.SKIPPED, NodePhase.PENDING}
        if reached and phases <= done:
            phase = NodePhase.SUCCEEDED
        elif reached:
            phase = NodePhase.RUNNING  # some members done, the next not yet launched
        else:
            phase = NodePhase.SKIPPED if phases == {NodePhase.SKIPPED} else NodePhase.PENDING
    return NodeView(
        state=block.name,
        phase=phase,
        iteration=max((m.iteration for m in members), default=0),
        gpu_hours=round(sum(m.gpu_hours for m in members), 4),
    )


def node_views(
    blocks: list[Block], ledger: RuntimeLedger, waiting: dict[str, str] | None = None
) -> dict[str, NodeView]:
    """Every state's view, containers included; `waiting` maps a state to what it waits for."""
    views = _leaf_views(ledger)
    ended = ledger.status is not LedgerStatus.RUNNING
    for state, why in (waiting or {}).items() if not ended else ():
        view = views.setdefault(state, NodeView(state=state))
        view.phase, view.detail = NodePhase.WAITING, why
    for top in blocks:
        for block in reversed(top.walk()):  # members before their containers
            if block.kind is BlockKind.NODE:
                view = views.setdefault(block.name, NodeView(state=block.name))
                if ended and view.phase is NodePhase.PENDING:
                    view.phase = NodePhase.SKIPPED
            else:
                views[block.name] = _container_view(block, views)
    for record in ledger.fan_outs.values():  # the newest occurrence of each group says last
        if record.group in views:
            views[record.group].detail = record.text(run_open=not ended)
            views[record.group].badge = record.badge()
    return views
