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
    """What the workflow records outside the run once a transition happened (strongest wins)."""

    NONE = 0  # kept in the pending ledger delta, exported with the next flush
    PUBLISH = 1  # search attributes, memo and the UI's current details follow at once
    FLUSH = 2  # a wave's record matters now: the pending delta is exported, then published
    ANNOUNCE = 3  # the run's phase changed: published at once, then the ledger gets its status


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
