"""The one traversal (DESIGN §3.1): a deterministic walk over an executor.

The planner drives it with an executor that succeeds instantly and answers
decisions from the assumption; the Temporal workflow drives it with one that
calls activities. Nothing here touches the world.
"""

from __future__ import annotations

from dataclasses import dataclass

from npaflow.catalog.models import ToolCatalog
from npaflow.context import RunContext, keyed_context
from npaflow.decisions import evaluate_predicate
from npaflow.document.models import State, WorkflowSpec
from npaflow.errors import NpaflowError, PayloadError, TokenError
from npaflow.step_bound import walk_limit
from npaflow.steps import PlanStep, StepPlacement, WalkTokens, materialize_step
from npaflow.tokens import UnknownStateTokenError, resolve_config_int
from npaflow.traversal.branching import next_state
from npaflow.traversal.fan_out import FanOutWalk
from npaflow.traversal.models import (
    DecisionRequest,
    Executor,
    Wave,
)
from npaflow.traversal.reads import WalkReads
from npaflow.traversal.record import WalkRecord
from npaflow.traversal.wave_building import batch_wave, group_concurrency, serial_wave
from npaflow.waves import split_into_batches

#: Sequences entered inside sequences while walking (the walk recurses once per level).
MAX_WALK_DEPTH = 64


class StepLimitError(NpaflowError):
    """The walk produced more steps than any bounded spec can, or nested too deeply."""


class WaveFailedError(PayloadError):
    """A wave (or a group batch) did not succeed; carries the root-cause error."""


@dataclass
class DecisionScope:
    """The decision visible to one loop iteration (scoped per loop, DESIGN §4)."""

    value: str = ""


class Walker:
    """Expands the state graph exactly as reference §4.3, dispatching waves as it goes."""

    def __init__(
        self,
        spec: WorkflowSpec,
        catalog: ToolCatalog,
        context: RunContext,
        *,
        executor: Executor,
        assumption: str = "",
        cap: int = 0,
        strict_branches: bool = True,
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        self.context = context
        self.executor = executor
        self.assumption = assumption
        self.cap = cap
        self.strict_branches = strict_branches
        self.tokens = WalkTokens()
        self.key_context = keyed_context(spec, catalog)
        self.record = WalkRecord()
        self.sequence = 0
        self.occurrences = 0
        self.reads = WalkReads(spec, context, executor, self.tokens)
        self.limit = walk_limit(spec, context.config)
        self.depth = 0

    async def walk(self) -> WalkRecord:
        """Walk from `initial` to the end and return what happened."""
        await self._expand_chain(self.spec.initial, follow=True, loop_label="", decisions=DecisionScope())
        return self.record

    async def _expand_chain(
        self, name: str, *, follow: bool, loop_label: str, decisions: DecisionScope
    ) -> None:
        """Expand a state, then the `next`/`goto` chain it hands back (iteratively)."""
        current: str | None = name
        while current:
            current = await self._expand(
                self.spec.states[current], follow=follow, loop_label=loop_label, decisions=decisions
            )
            follow, loop_label = True, ""

    async def _expand(
        self, state: State, *, follow: bool, loop_label: str, decisions: DecisionScope
    ) -> str | None:
        self._check_limit()
        if state.parallel:
            await self._run_group(state)
            return state.next or None
        if state.sequence:
            await self._run_sequence(state, decisions)
            return state.next or None
        if state.loop is not None:
            decision = await self._run_single_state_loop(state, loop_label)
            return self._choose_next(state, decision)
        return await self._run_leaf(state, follow=follow, loop_label=loop_label, decisions=decisions)

    async def _run_sequence(self, state: State, decisions: DecisionScope) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_WALK_DEPTH:
                raise StepLimitError(
                    f"state {state.name}: sequences nest more than {MAX_WALK_DEPTH} levels deep "
                    "while walking (children's next chains lead into further sequences); flatten "
                    "the nesting or chain the states at the top level"
                )
            await self._run_sequence_body(state, decisions)
        finally:
            self.depth -= 1

    async def _run_sequence_body(self, state: State, decisions: DecisionScope) -> None:
        if state.loop is None:
            for child in state.sequence:
                await self._expand_chain(child, follow=False, loop_label=state.name, decisions=decisions)
            return
        bound = resolve_config_int(state.loop.max if state.loop.max is not None else 1, self.context.config)
        for iteration in range(1, bound + 1):
            self.tokens.loops[state.name] = iteration
            scope = DecisionScope()
            for child in state.sequence:
                await self._expand_chain(child, follow=False, loop_label=state.name, decisions=scope)
            if not scope.value:
                scope.value = await self.reads.writer_decision(state)
            scope.value = scope.value or self.assumption
            if state.loop.until and evaluate_predicate(state.loop.until, scope.value):
                break

    async def _run_single_state_loop(self, state: State, loop_label: str) -> str:
        assert state.loop is not None
        bound = resolve_config_int(state.loop.max if state.loop.max is not None else 1, self.context.config)
        decision = ""
        for iteration in range(1, bound + 1):
            self.tokens.loops[state.name] = iteration
            step = await self._run_serial(state, StepPlacement(iteration=iteration, loop_label=loop_label))
            declares = any(a.is_decision() for a in state.outputs) or "decision_uri" in state.params
            decision = (
                await self.reads.state_decision(state, step)
                if declares
                else await self.executor.assume_decision(
                    DecisionRequest(state=state.name, uri="", iteration=iteration)
                )
            ) or self.assumption
            if state.loop.until and evaluate_predicate(state.loop.until, decision):
                break
        return decision

    async def _run_leaf(
        self, state: State, *, follow: bool, loop_label: str, decisions: DecisionScope
    ) -> str | None:
        step = await self._run_serial(state, StepPlacement(loop_label=loop_label))
        if state.terminal:
            return None
        if state.transitions:
            decisions.value = (await self.reads.state_decision(state, step)) or self.assumption
            if not follow:
                return None
            return self._choose_next(state, decisions.value)
        return state.next or None

    def _choose_next(self, state: State, decision: str) -> str | None:
        return next_state(state, decision, self.context.config, strict=self.strict_branches)

    async def _run_serial(self, state: State, placement: StepPlacement) -> PlanStep:
        step = self.materialize(state, placement)
        if not state.is_executable():
            self.tokens.record_outputs(step)
            return step  # a pure router or terminal marker launches nothing
        await self.reads.wait_trigger(state, step)
        self.sequence += 1
        self.occurrences += 1
        wave = serial_wave(step, sequence=self.sequence, occurrence=self.occurrences)
        await self._dispatch(wave)
        return step

    async def _run_group(self, group: State) -> None:
        if group.for_each is not None:
            error = await FanOutWalk(self, group).run()
            if error:
                raise WaveFailedError(error)
            return
        placement = StepPlacement(loop_label=group.name, group=group.name)
        members = [self.spec.states[name] for name in group.parallel]
        steps = [self.materialize(member, placement) for member in members]
        for member, step in zip(members, steps, strict=True):
            await self.reads.wait_trigger(member, step)
        concurrency = group_concurrency(group, len(steps), self.context.config)
        batches = split_into_batches(steps, concurrency, self.cap)
        self.occurrences += 1
        for index, batch_steps in enumerate(batches, start=1):
            self.sequence += 1
            wave = batch_wave(
                group.name,
                tuple(batch_steps),
                sequence=self.sequence,
                occurrence=self.occurrences,
                batch=(index, len(batches)),
                concurrency=concurrency,
            )
            try:
                await self._dispatch(wave)
            except WaveFailedError as exc:
                for rest in batches[index:]:
                    self.record.skipped.extend(rest)
                raise WaveFailedError(str(exc)) from None

    async def _dispatch(self, wave: Wave) -> None:
        self.record.waves.append(wave)
        outcome = await self.executor.run_wave(wave)
        if not outcome.succeeded:
            raise WaveFailedError(outcome.error or f"wave {wave.key} failed")
        for step in wave.steps:
            self.tokens.record_outputs(step)

    def materialize(self, state: State, placement: StepPlacement) -> PlanStep:
        """The step of `state` here, its tokens resolved against the walk so far (and recorded)."""
        step = self.resolved(state, placement)
        self.record.steps.append(step)
        self.reads.latest[state.name] = step
        return step

    def resolved(self, state: State, placement: StepPlacement) -> PlanStep:
        """The step of `state` here, its tokens resolved against the walk so far (not recorded)."""
        try:
            return materialize_step(
                self.spec,
                state,
                context=self.context,
                catalog=self.catalog,
                walk=self.tokens,
                placement=placement,
                key_context=self.key_context,
            )
        except TokenError as exc:
            raise TokenError(f"state {state.name}: {exc}{self._member_hint(exc)}") from None

    def _member_hint(self, exc: TokenError) -> str:
        """Why a fan-out member's outputs are no token of their own, when the error names one."""
        named = str(exc).rpartition("state token: state.")[2].split(".")[0]
        for group in self.spec.states.values():
            if isinstance(exc, UnknownStateTokenError) and group.for_each and group.parallel == (named,):
                return (
                    f" ('{named}' is the member template of forEach group '{group.name}': its outputs "
                    f"differ per item; read the group's members.json as {{{{state.{group.name}.uri}}}})"
                )
        return ""

    def _check_limit(self) -> None:
        if len(self.record.steps) >= self.limit:
            raise StepLimitError("plan exceeded step limit; check for unbounded control-flow cycles")
