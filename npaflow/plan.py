"""Offline planning: the traversal driven by an executor that always succeeds.

Decisions come from the assumption (reference §4.1), so the plan is exactly
what a run would do if every decision artifact said that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Coroutine, Sequence
from typing import TypedDict, TypeVar, Unpack

from pydantic import BaseModel, JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.context import build_run_context
from npaflow.decisions import LOOP_BACK, PROMOTE, normalize_decision, resolve_assumption
from npaflow.document.models import WorkflowSpec
from npaflow.fanout import ItemsRead, ItemsRequest, MembersOutcome, list_digest, parsed_items
from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.spec_content import spec_content
from npaflow.steps import PlanStep
from npaflow.traversal import (
    DecisionRequest,
    TriggerRequest,
    Walker,
    Wave,
    WaveKind,
    WaveOutcome,
)

DEFAULT_PLAN_RUN_ID = RunId("plan-run")
#: `--assume-items`: one list for every fan-out group, or a list per group name.
AssumedItems = list[JsonValue] | dict[str, list[JsonValue]] | None
_SUCCEEDED = WaveOutcome(succeeded=True)
T = TypeVar("T")


class PlanExecutor:
    """Succeeds every wave at once; decisions come from a script, then the assumption.

    A fan-out group's list comes from `items` (`--assume-items`: one list for every
    group, or a list per group name); without one the group plans as its template.
    """

    def __init__(self, decisions: Sequence[str] = (), items: AssumedItems = None) -> None:
        self.decisions = list(decisions)
        self.items = items

    async def run_wave(self, wave: Wave) -> WaveOutcome:
        """Pretend the wave succeeded."""
        return _SUCCEEDED

    async def read_decision(self, request: DecisionRequest) -> str:
        """Answer from the scripted decisions; once they run out the walker assumes."""
        return normalize_decision(self.decisions.pop(0)) if self.decisions else ""

    async def assume_decision(self, request: DecisionRequest) -> str:
        """Plans take the planning assumption where no artifact is declared."""
        return ""

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Plans ignore triggers (reference §6.7)."""

    async def read_items(self, request: ItemsRequest) -> ItemsRead:
        """The assumed list, checked as a run checks the one it reads; unknown without one."""
        assumed = self.items.get(request.group) if isinstance(self.items, dict) else self.items
        if assumed is None:
            return ItemsRead(known=False)
        text = json.dumps(assumed)
        items = parsed_items(text, uri=f"--assume-items for {request.group}", max_items=request.max_items)
        return ItemsRead(items=tuple(items), digest=list_digest(items))

    async def still_done(self, group: str, outputs: dict[str, list[str]]) -> set[str]:
        """Plans read no outputs: nothing was finished before."""
        return set(outputs)

    async def record_members(self, members: MembersOutcome, read: ItemsRead, *, ended: bool) -> None:
        """Plans record nothing."""

    def members_progressed(self, fan_out: str, succeeded: int, failing: int) -> None:
        """Plans count nothing."""


class Occurrence(BaseModel):
    """One visit of a serial state or a group, with the waves (batches) it launched.

    `plan-spec --waves` prints these under the reference's JSON key `waves`.
    """

    model_config = FROZEN

    index: int
    kind: WaveKind
    group: str
    name: str
    max_concurrency: int
    batches: tuple[Wave, ...]

    @property
    def steps(self) -> list[PlanStep]:
        """Every step of the occurrence, across its batches."""
        return [step for batch in self.batches for step in batch.steps]

    def to_dict(self) -> dict[str, JsonValue]:
        """Return the reference's `plan-spec --waves --json` shape of one entry."""
        return {
            "index": self.index,
            "kind": self.kind.value,
            "group": self.group,
            "name": self.name,
            "max_concurrency": self.max_concurrency,
            "batches": len(self.batches),
            "steps": [
                {
                    "state": s.state,
                    "iteration": s.iteration,
                    "tool_ref": s.tool_ref,
                    "resources": s.resources,
                    "outputs": [a.uri for a in s.outputs],
                }
                for s in self.steps
            ],
        }


class ExecutionPlan(BaseModel):
    """A whole offline plan: flat steps plus the waves the walk dispatched."""

    model_config = FROZEN

    workflow: str
    api_version: str
    initial: str
    run_id: RunId
    assume_decision: str
    steps: tuple[PlanStep, ...]
    waves: tuple[Wave, ...]

    def occurrences(self) -> list[Occurrence]:
        """Fold the waves into occurrences, one per serial step or group occurrence."""
        grouped: dict[int, list[Wave]] = {}
        for wave in self.waves:
            grouped.setdefault(wave.occurrence, []).append(wave)
        occurrences = []
        for index, batches in enumerate(grouped.values()):
            first = batches[0]
            occurrences.append(
                Occurrence(
                    index=index,
                    kind=WaveKind.PARALLEL if first.group else WaveKind.SERIAL,
                    group=first.group,
                    name=first.group or first.steps[0].state,
                    max_concurrency=first.max_concurrency if first.group else 1,
                    batches=tuple(batches),
                )
            )
        return occurrences

    def to_dict(self) -> dict[str, JsonValue]:
        """Return the reference's `plan-spec --json` shape (§4.2)."""
        return {
            "workflow": self.workflow,
            "api_version": self.api_version,
            "initial": self.initial,
            "assume_decision": self.assume_decision,
            "steps": [step.to_plan_dict() for step in self.steps],
        }

    def waves_to_dict(self) -> dict[str, JsonValue]:
        """Return the reference's `plan-spec --waves --json` shape (§5)."""
        occurrences = self.occurrences()
        return {
            "workflow": self.workflow,
            "run_id": self.run_id,
            "assume_decision": self.assume_decision,
            "wave_count": len(occurrences),
            "parallel_waves": sum(1 for o in occurrences if o.kind is WaveKind.PARALLEL),
            "waves": [occurrence.to_dict() for occurrence in occurrences],
        }


async def build_plan_async(
    spec: WorkflowSpec,
    catalog: ToolCatalog,
    *,
    run_id: RunId = DEFAULT_PLAN_RUN_ID,
    assume_decision: str = "",
    cap: int = 0,
    decisions: Sequence[str] = (),
    items: AssumedItems = None,
) -> ExecutionPlan:
    """Walk the spec offline and return the plan (`decisions` script the artifact reads)."""
    assumption = resolve_assumption(
        assume_decision, spec.config.get("plan_assume_decision"), spec.has_transitions()
    )
    context = build_run_context(spec, catalog, run_id)
    walker = Walker(
        spec,
        catalog,
        context,
        executor=PlanExecutor(decisions, items),
        assumption=assumption,
        cap=cap,
        strict_branches=False,
    )
    record = await walker.walk()
    return ExecutionPlan(
        workflow=spec.name,
        api_version=spec.api_version,
        initial=spec.initial,
        run_id=run_id,
        assume_decision=assumption,
        steps=tuple(record.steps),
        waves=tuple(record.waves),
    )


class PlanOptions(TypedDict, total=False):
    """`build_plan`'s options, as `build_plan_async` names them."""

    run_id: RunId
    assume_decision: str
    cap: int
    decisions: Sequence[str]
    items: AssumedItems


def build_plan(spec: WorkflowSpec, catalog: ToolCatalog, **options: Unpack[PlanOptions]) -> ExecutionPlan:
    """Synchronous `build_plan_async`; the plan executor never suspends, so no loop is needed."""
    return run_to_completion(build_plan_async(spec, catalog, **options))


def plan_fingerprint(plan: ExecutionPlan, spec: WorkflowSpec | None = None) -> str:
    """16 hex chars identifying what a run of this plan would launch (reference §6.5).

    With `spec`, every state's definition (on every branch) and the config count
    too, so an edit anywhere changes it; runs record this form.
    """
    document: dict[str, object] = {
        "workflow": plan.workflow,
        "api_version": plan.api_version,
        "steps": [
            {
                "state": s.state,
                "iteration": s.iteration,
                "group": s.group,
                "argv": list(s.argv),
                "shell": s.shell,
                "resources": s.resources,
            }
            for s in plan.steps
        ],
    }
    if spec is not None:
        document["spec"] = spec_content(spec)
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def spec_plans(spec: WorkflowSpec, catalog: ToolCatalog) -> list[ExecutionPlan]:
    """The plan under each decision a gate can read (one plan when nothing is decided).

    What is checked before a run starts (images, quota arithmetic) is checked on every
    path the run could take, since the decisions are only read at run time.
    """
    if not spec.has_transitions() and not _has_decided_loops(spec):
        return [build_plan(spec, catalog)]
    return [build_plan(spec, catalog, assume_decision=decision) for decision in (PROMOTE, LOOP_BACK)]


def _has_decided_loops(spec: WorkflowSpec) -> bool:
    return any(state.loop is not None for state in spec.states.values())


def run_to_completion(coroutine: Coroutine[object, object, T]) -> T:
    """Drive a coroutine that never really suspends to its result."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        result: T = stop.value
        return result
    coroutine.close()
    raise RuntimeError("the plan executor suspended; planning must not wait on anything")
