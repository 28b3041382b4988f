"""`FanOutMembers`: the wave layer that says which members of a failed fan-out batch did not succeed.

A batch is one job (a JobGroup); its members end one by one. When the batch's
attempts are spent and it failed, this layer weighs the batch's attempts
(workflows_def/fanout/member_attempts.py) and names the members none of them
ran to success, so the walk can weigh them against `minSuccess`.
"""

from __future__ import annotations

from temporalio import workflow

from npaflow.runtime.run_state import RunState
from npaflow.traversal import WaveOutcome
from workflows_def.fanout.member_attempts import failed_members, this_execution
from workflows_def.patches import MEMBER_OUTPUTS
from workflows_def.run_deps import RunDeps
from workflows_def.wave_layers import Next, WaveCall


class FanOutMembers:
    """Names a failed fan-out batch's members that did not succeed."""

    def __init__(self, deps: RunDeps) -> None:
        self.state: RunState = deps.state

    async def around(self, call: WaveCall, next_: Next) -> WaveOutcome:
        """Pass the wave on; if a fan-out batch failed, name its members that did not succeed."""
        outcome = await next_(call)
        if outcome.succeeded or call.wave.fan_out is None:
            return outcome
        outputs = workflow.patched(MEMBER_OUTPUTS)
        failed = failed_members(call.wave, this_execution(self.state, call.wave), outputs=outputs)
        return outcome.model_copy(update={"failed_items": failed})
