"""The transition tables of a run: its phases and the stages of every wave attempt.

Each transition is named after its target and declares the states it may start
from (STYLE rules 11-13). `npaflow.runtime.run_state.RunState` applies them;
docs/runtime-states.md embeds `mermaid_diagram` of both tables, and a test
keeps the two in sync.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

from npaflow.runtime.ledger import WaveStatus
from npaflow.runtime.summary import RunPhase

S = TypeVar("S", bound=StrEnum)


class AttemptStage(StrEnum):
    """Where one wave attempt is; finer than the ledger's `WaveStatus` it maps onto."""

    NEW = "new"  # not recorded by this execution yet
    LAUNCHING = "launching"  # recorded as running before crossing the launch boundary
    IN_FLIGHT = "in_flight"  # the exact job is known; every abort path cancels it
    KEPT = "kept"  # timed out with cancel_on_timeout off: left running on purpose
    SUCCEEDED = "succeeded"  # terminal success with every declared output present
    FAILED = "failed"  # failed; the budgets decide whether another attempt follows
    CANCELLED = "cancelled"  # the run was cancelled while the attempt was in flight

    def ledger_status(self) -> WaveStatus:
        """The `status` the ledger records for an attempt at this stage."""
        return _LEDGER_STATUS[self]


_LEDGER_STATUS = {
    AttemptStage.NEW: WaveStatus.PENDING,
    AttemptStage.LAUNCHING: WaveStatus.RUNNING,
    AttemptStage.IN_FLIGHT: WaveStatus.RUNNING,
    AttemptStage.KEPT: WaveStatus.RUNNING,
    AttemptStage.SUCCEEDED: WaveStatus.SUCCEEDED,
    AttemptStage.FAILED: WaveStatus.FAILED,
    AttemptStage.CANCELLED: WaveStatus.CANCELLED,
}


@dataclass(frozen=True)
class Transition(Generic[S]):
    """A named move to `target`, allowed only from `sources`; `when` labels the diagram."""

    name: str
    sources: frozenset[S]
    target: S
    when: str


def _table(*rows: Transition[S]) -> dict[str, Transition[S]]:
    return {row.name: row for row in rows}


P, A = RunPhase, AttemptStage
_LIVE = frozenset({P.STARTING, P.RUNNING, P.PAUSED, P.SUSPENDED})

PHASE_TRANSITIONS: dict[str, Transition[RunPhase]] = _table(
    Transition("run_started", frozenset({P.STARTING}), P.RUNNING, "spec loaded"),
    Transition("run_paused", frozenset({P.RUNNING}), P.PAUSED, "signal pause, at the next launch"),
    Transition("run_resumed", frozenset({P.PAUSED, P.SUSPENDED}), P.RUNNING, "signal resume"),
    Transition(
        "run_suspended", frozenset({P.RUNNING}), P.SUSPENDED, "wave failed for good, on_failure=suspend"
    ),
    Transition("run_cancelling", _LIVE, P.CANCELLING, "cancel: signal, UI, temporal CLI"),
    Transition(
        "run_cancelled", frozenset({P.CANCELLING}), P.CANCELLED, "in-flight jobs cancelled by exact id"
    ),
    Transition("run_succeeded", frozenset({P.RUNNING}), P.SUCCEEDED, "the walk reached its end"),
    Transition(
        "run_failed", _LIVE | {P.CANCELLING}, P.FAILED, "in-flight jobs cancelled, then failed for good"
    ),
)

WAVE_TRANSITIONS: dict[str, Transition[AttemptStage]] = _table(
    Transition("wave_launching", frozenset({A.NEW}), A.LAUNCHING, "recorded, launch_wave called"),
    Transition("wave_launched", frozenset({A.LAUNCHING}), A.IN_FLIGHT, "exact job id known"),
    Transition(
        "wave_adopted", frozenset({A.NEW}), A.IN_FLIGHT, "resume: an earlier execution's job is polled again"
    ),
    Transition("wave_observed", frozenset({A.IN_FLIGHT}), A.IN_FLIGHT, "await_wave returned"),
    Transition("wave_left_running", frozenset({A.IN_FLIGHT}), A.KEPT, "timeout with cancel_on_timeout off"),
    Transition(
        "wave_succeeded", frozenset({A.IN_FLIGHT}), A.SUCCEEDED, "SUCCEEDED and every declared output exists"
    ),
    Transition(
        "wave_replayed", frozenset({A.NEW}), A.SUCCEEDED, "resume: succeeded earlier, outputs still there"
    ),
    Transition(
        "wave_failed",
        frozenset({A.LAUNCHING, A.IN_FLIGHT}),
        A.FAILED,
        "failed, timed out or no capacity (job cancelled by id first)",
    ),
    Transition(
        "wave_cancelled",
        frozenset({A.LAUNCHING, A.IN_FLIGHT}),
        A.CANCELLED,
        "run cancelled (job cancelled by id)",
    ),
)


class TransitionError(RuntimeError):
    """A transition was applied from a state it does not allow: a bug, never a user error.

    Not an NpaflowError on purpose: the workflow task fails and is retried, so a
    fixed worker can carry the run on, instead of the run failing for good.
    """

    def __init__(self, transition: Transition[Any], subject: str, current: StrEnum) -> None:
        allowed = ", ".join(sorted(s.value for s in transition.sources))
        super().__init__(f"{transition.name}: {subject} is {current.value}; allowed from: {allowed}")
        self.transition = transition
        self.current = current


def mermaid_diagram(transitions: Iterable[Transition[Any]], initial: StrEnum) -> str:
    """The table as a mermaid state diagram (docs/runtime-states.md embeds it)."""
    lines = ["stateDiagram-v2", f"    [*] --> {initial.value}"]
    for row in transitions:
        for source in sorted(row.sources, key=lambda s: s.value):
            lines.append(f"    {source.value} --> {row.target.value}: {row.name} ({row.when})")
    return "\n".join(lines)
