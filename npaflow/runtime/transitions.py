"""The transition tables of a run: its phases and the stages of every wave attempt.

Each transition is an enum member named after its target; it declares the
states it may start from and what the run records outside itself once it
happened (`Effect`): nothing yet, the UI and search attributes, or the ledger
too. `npaflow.runtime.run_state.RunState` applies them; docs/runtime-states.md
embeds `mermaid_diagram` of both tables, and a test keeps the two in sync.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, IntEnum, StrEnum
from typing import Any, Generic, TypeVar

from npaflow.runtime.vocabulary import AttemptStage, RunPhase

S = TypeVar("S", bound=StrEnum)


class Effect(IntEnum):
    """What the workflow records outside the run once a change happened (the stronger one wins)."""

    NONE = 0  # kept in the pending ledger delta, exported with the next flush
    DETAILS = 1  # only the UI's current details follow at once (no history event)
    PUBLISH = 2  # search attributes, memo and the UI's current details follow at once
    EXPORT = 3  # the pending delta is exported at once (nothing the UI shows changed)
    FLUSH = 4  # a wave's record matters now: the pending delta is exported, then published
    ANNOUNCE = 5  # the run's phase changed: published at once, then the ledger gets its status

    def __or__(self, other: int) -> Effect:
        """Both effects: a publish and an export asked for apart make a flush."""
        if {self, other} == {Effect.PUBLISH, Effect.EXPORT}:
            return Effect.FLUSH
        return Effect(max(self, other))


@dataclass(frozen=True)
class Transition(Generic[S]):
    """A move to `target`, allowed only from `sources`; `when` labels the diagram."""

    name: str
    sources: frozenset[S]
    target: S
    when: str
    effect: Effect


P, A = RunPhase, AttemptStage
_LIVE = frozenset({P.STARTING, P.RUNNING, P.PAUSED, P.SUSPENDED})


class RunTransition(Enum):
    """The run's phase changes."""

    STARTED = Transition("run_started", frozenset({P.STARTING}), P.RUNNING, "spec loaded", Effect.PUBLISH)
    PAUSED = Transition(
        "run_paused", frozenset({P.RUNNING}), P.PAUSED, "signal pause, at the next launch", Effect.PUBLISH
    )
    RESUMED = Transition(
        "run_resumed", frozenset({P.PAUSED, P.SUSPENDED}), P.RUNNING, "signal resume", Effect.ANNOUNCE
    )
    SUSPENDED = Transition(
        "run_suspended",
        frozenset({P.RUNNING}),
        P.SUSPENDED,
        "wave failed for good, on_failure=suspend",
        Effect.ANNOUNCE,
    )
    CANCELLING = Transition(
        "run_cancelling", _LIVE, P.CANCELLING, "cancel: signal, UI, temporal CLI", Effect.PUBLISH
    )
    CANCELLED = Transition(
        "run_cancelled",
        frozenset({P.CANCELLING}),
        P.CANCELLED,
        "in-flight jobs cancelled by exact id",
        Effect.ANNOUNCE,
    )
    SUCCEEDED = Transition(
        "run_succeeded", frozenset({P.RUNNING}), P.SUCCEEDED, "the walk reached its end", Effect.ANNOUNCE
    )
    FAILED = Transition(
        "run_failed",
        _LIVE | {P.CANCELLING},
        P.FAILED,
        "in-flight jobs cancelled, then failed for good",
        Effect.ANNOUNCE,
    )


class WaveTransition(Enum):
    """The stage changes of one wave attempt."""

    LAUNCHING = Transition(
        "wave_launching", frozenset({A.NEW}), A.LAUNCHING, "recorded, launch_wave called", Effect.NONE
    )
    LAUNCHED = Transition(
        "wave_launched", frozenset({A.LAUNCHING}), A.IN_FLIGHT, "exact job id known", Effect.FLUSH
    )
    ADOPTED = Transition(
        "wave_adopted",
        frozenset({A.NEW}),
        A.IN_FLIGHT,
        "resume: an earlier execution's job is polled again",
        Effect.NONE,
    )
    OBSERVED = Transition(
        "wave_observed", frozenset({A.IN_FLIGHT}), A.IN_FLIGHT, "await_wave returned", Effect.NONE
    )
    LEFT_RUNNING = Transition(
        "wave_left_running",
        frozenset({A.IN_FLIGHT}),
        A.KEPT,
        "timeout with cancel_on_timeout off",
        Effect.FLUSH,
    )
    # Success is exported with the next launch, wait or the run's end: one export per wave.
    SUCCEEDED = Transition(
        "wave_succeeded",
        frozenset({A.IN_FLIGHT}),
        A.SUCCEEDED,
        "SUCCEEDED and every declared output exists",
        Effect.NONE,
    )
    REPLAYED = Transition(
        "wave_replayed",
        frozenset({A.NEW}),
        A.SUCCEEDED,
        "resume: succeeded earlier, outputs still there",
        Effect.NONE,
    )
    SERVED_FROM_CACHE = Transition(
        "wave_served_from_cache",
        frozenset({A.NEW}),
        A.SUCCEEDED,
        "every step hit a verified cache entry; its outputs were copied, no job launched",
        Effect.FLUSH,
    )
    CACHE_STORED = Transition(
        "wave_cache_stored",
        frozenset({A.SUCCEEDED}),
        A.SUCCEEDED,
        "succeeded with verified outputs: an entry per cached step written for later runs",
        Effect.NONE,
    )
    FAILED = Transition(
        "wave_failed",
        frozenset({A.LAUNCHING, A.IN_FLIGHT}),
        A.FAILED,
        "failed, timed out or no capacity (job cancelled by id first)",
        Effect.FLUSH,
    )
    CANCELLED = Transition(
        "wave_cancelled",
        frozenset({A.LAUNCHING, A.IN_FLIGHT}),
        A.CANCELLED,
        "run cancelled (job cancelled by id)",
        Effect.NONE,
    )


@dataclass(frozen=True)
class Note:
    """A change that moves no phase or stage (a request, a reading, an export's outcome)."""

    name: str
    when: str
    effect: Effect


class RunNote(Enum):
    """Every change to a run besides its transitions, with what the recorder does after it."""

    PAUSE_REQUESTED = Note("pause_requested_by_operator", "signal pause (held at next launch)", Effect.NONE)
    RESUME_REQUESTED = Note("resume_requested_by_operator", "signal resume", Effect.NONE)
    CANCEL_REQUESTED = Note("cancel_requested", "signal cancel (its reason goes to the ledger)", Effect.NONE)
    STATES_ENTERED = Note("states_entered", "the walk moved on (shown with the next publish)", Effect.NONE)
    DECISION_TAKEN = Note("add_decision", "a decision read, or the assumption standing in", Effect.NONE)
    DECISIONS_CARRIED = Note("decisions_carried", "earlier executions' decisions stay the first", Effect.NONE)
    WATERMARK_SEEN = Note("add_watermark", "a trigger fired", Effect.NONE)
    FAN_OUT_RECORDED = Note("add_fan_out", "a fan-out's list was read, or its members ended", Effect.NONE)
    NOTIFIED = Note("add_notification", "a notification was delivered or failed", Effect.EXPORT)
    USAGE_CARRIED = Note("usage_carried", "earlier executions' hours count in this run's", Effect.NONE)
    QUOTA_CARRIED = Note("quota_carried", "earlier executions' ended quota waits count in it", Effect.NONE)
    LOCATED = Note("run_located", "the ledger's location is known", Effect.NONE)
    TRIGGER_WAITING = Note("trigger_waiting", "a trigger's wait begins: the ledger catches up", Effect.FLUSH)
    QUOTA_WAITING = Note("quota_waiting", "a wave waits for GPUs from its quota pool", Effect.PUBLISH)
    QUOTA_SETTLED = Note("quota_settled", "the wave was granted its GPUs, or stopped waiting", Effect.PUBLISH)
    CACHE_WAITING = Note("cache_flight_waiting", "a wave waits for the run making its entry", Effect.DETAILS)
    CACHE_BOARDED = Note(
        "cache_flight_boarded", "the wave holds its keys, or stopped waiting", Effect.DETAILS
    )
    LAUNCHES_HELD = Note("launches_held", "pause reached the launch gate: ledger catches up", Effect.FLUSH)
    HANDING_OVER = Note("handing_over", "continue-as-new: the ledger catches up first", Effect.FLUSH)
    EXPORTED = Note("ledger_written", "an export succeeded: what it carried is written", Effect.NONE)
    EXPORT_FAILED = Note("ledger_export_failed", "the last export failed for good", Effect.PUBLISH)


def notes_table() -> str:
    """The notes as a markdown table (docs/runtime-states.md embeds it)."""
    lines = ["| change | when | then |", "| --- | --- | --- |"]
    lines += [f"| `{n.value.name}` | {n.value.when} | {n.value.effect.name.lower()} |" for n in RunNote]
    return "\n".join(lines)


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
