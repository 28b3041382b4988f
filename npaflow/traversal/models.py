"""What the traversal asks an executor to do, and what it gets back."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel

from npaflow.document.models import Trigger
from npaflow.fanout.models import ItemsRead, ItemsRequest, MembersOutcome
from npaflow.presets import FROZEN
from npaflow.steps import PlanStep
from npaflow.waves import WaveKey


class WaveKind(StrEnum):
    """How a wave is launched."""

    SERIAL = "serial"  # one task: a one-document serial pipeline
    PARALLEL = "parallel"  # two or more group members: a SkyPilot JobGroup


class FanOutMark(BaseModel):
    """What a fan-out batch says of its list (plans show it: "N items from URI")."""

    model_config = FROZEN

    items_uri: str
    count: int = 0  # the items; planned without the list, the most `forEach.max` allows
    known: bool = True  # False: planned without --assume-items, read at run time


class Wave(BaseModel):
    """One launch: a serial step, or one batch of a group occurrence (see npaflow.waves)."""

    model_config = FROZEN

    sequence: int
    key: WaveKey
    kind: WaveKind
    group: str = ""
    label: str
    steps: tuple[PlanStep, ...]
    occurrence: int
    batch_index: int = 1
    batch_count: int = 1
    max_concurrency: int = 1
    fan_out: FanOutMark | None = None  # a batch of a `forEach:` group

    @property
    def states(self) -> list[str]:
        """The state names of the wave, in order."""
        return [step.state for step in self.steps]


class WaveOutcome(BaseModel):
    """The result of running one wave to a terminal state."""

    model_config = FROZEN

    succeeded: bool
    error: str = ""
    #: A fan-out batch that failed: the item keys of its members that did not succeed.
    failed_items: tuple[str, ...] = ()


class DecisionRequest(BaseModel):
    """Read the decision artifact a state wrote."""

    model_config = FROZEN

    state: str
    uri: str
    iteration: int | None = None


class TriggerRequest(BaseModel):
    """Wait until a prefix holds enough objects before a state's work starts."""

    model_config = FROZEN

    state: str
    uri: str
    trigger: Trigger


class Executor(Protocol):
    """The side of the traversal that does (or pretends to do) the work."""

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Run one wave to a terminal state."""
        ...

    async def read_decision(self, request: DecisionRequest) -> str:
        """Return the normalized decision, or "" when there is none."""
        ...

    async def assume_decision(self, request: DecisionRequest) -> str:
        """The decision of a state with no decision source (`uri` is ""), or "" for the walk's default."""
        ...

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Block until the trigger is satisfied, or raise."""
        ...

    async def read_items(self, request: ItemsRequest) -> ItemsRead:
        """A fan-out group's list (checked, keyed), or `known=False` when only run time can say."""
        ...

    async def still_done(self, group: str, outputs: dict[str, list[str]]) -> set[str]:
        """Of the members an earlier execution finished (key: declared outputs), those still whole."""
        ...

    async def record_members(self, members: MembersOutcome, read: ItemsRead, *, ended: bool) -> None:
        """Keep how a fan-out's members stand (its `members.json` and the ledger's record)."""
        ...

    def members_progressed(self, fan_out: str, succeeded: int, failing: int) -> None:
        """How many of a running fan-out's members (`group#occurrence`) succeeded and failed so far."""
        ...
