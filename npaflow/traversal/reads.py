"""What the walk reads from the world: trigger waits and decisions, through the executor.

The walk decides *which* URI a decision or trigger lives at (from the state's
declared outputs, its `decision_uri` param, the run's tokens); the executor
reads it (an activity in a run, the assumption in a plan).
"""

from __future__ import annotations

from npaflow.context import RunContext, state_config
from npaflow.document.models import State, WorkflowSpec
from npaflow.steps import PlanStep, WalkTokens
from npaflow.tokens import TokenScope, resolve_text
from npaflow.traversal.models import DecisionRequest, Executor, TriggerRequest


class WalkReads:
    """Reads one walk's triggers and decisions; remembers each state's newest step."""

    def __init__(
        self,
        spec: WorkflowSpec,
        context: RunContext,
        executor: Executor,
        tokens: WalkTokens,
    ) -> None:
        self.spec = spec
        self.context = context
        self.executor = executor
        self.tokens = tokens
        self.latest: dict[str, PlanStep] = {}

    async def wait_trigger(self, state: State, step: PlanStep) -> None:
        """Wait for the state's `trigger:` prefix (if it has one) before it launches."""
        if state.trigger is None:
            return
        uri = resolve_text(state.trigger.uri, self.state_scope(state))
        await self.executor.wait_trigger(TriggerRequest(state=state.name, uri=uri, trigger=state.trigger))

    async def state_decision(self, state: State, step: PlanStep) -> str:
        """The state's decision: read from its decision URI, else the executor's assumption."""
        uri = self._decision_uri(state, step)
        if not uri:
            return await self.executor.assume_decision(
                DecisionRequest(state=state.name, uri="", iteration=step.iteration)
            )
        return await self.executor.read_decision(
            DecisionRequest(state=state.name, uri=uri, iteration=step.iteration)
        )

    async def writer_decision(self, sequence: State) -> str:
        """A loop's decision: read from its last child that `writesDecision`."""
        for child in reversed(sequence.sequence):
            body = self.spec.states[child]
            if body.writes_decision:
                step = self.latest.get(child)
                return await self.state_decision(body, step) if step else ""
        return await self.executor.assume_decision(DecisionRequest(state=sequence.name, uri=""))

    def _decision_uri(self, state: State, step: PlanStep) -> str:
        for artifact in step.outputs:
            if artifact.is_decision():
                return artifact.uri
        overlay = self.state_scope(state).config
        raw = overlay.get("decision_uri")
        return resolve_text(str(raw), self.state_scope(state)) if raw else ""

    def state_scope(self, state: State) -> TokenScope:
        """The tokens a state's own fields resolve in (its params overlaid on the config)."""
        base = self.context.scope(state_outputs=self.tokens.outputs, loop_iterations=self.tokens.loops)
        overlay = state_config(state, self.context, base)
        return self.context.scope(
            state_outputs=self.tokens.outputs, loop_iterations=self.tokens.loops, config=overlay
        )
