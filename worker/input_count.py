"""Refuses a workflow started with too few or too many inputs, before its code runs.

The SDK would call the run method anyway; its TypeError fails the workflow task,
which Temporal retries forever: a raw `temporal workflow start` without `--input`
sat stuck under its id. Installed on the main worker and the replayer.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from temporalio import workflow
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from npaflow.document.problems import START_HINTS
from workflows_def.input_refusal import refused


class InputCount(Interceptor):
    """Refuses a workflow started with the wrong number of inputs (the failure is not retried)."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        """Every workflow's inbound calls pass through the count check."""
        return _CountedInputs


class _CountedInputs(WorkflowInboundInterceptor):
    """Checks the input count before the run method is called."""

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        problem = input_count_problem(workflow.info().workflow_type, input.run_fn, len(input.args))
        if problem:
            raise refused(problem)
        return await super().execute_workflow(input)


def input_count_problem(name: str, run_fn: Callable[..., Any], given: int) -> str:
    """What is wrong with starting `name` with `given` inputs ("" when the run method takes them)."""
    parameters = list(inspect.signature(run_fn).parameters.values())[1:]  # past self
    least = sum(p.default is inspect.Parameter.empty for p in parameters)
    if least <= given <= len(parameters):
        return ""
    wanted = str(least) if least == len(parameters) else f"{least} to {len(parameters)}"
    text = f"{name} takes {wanted} input(s), got {given}"
    hint = _start_hint(run_fn)
    return f"{text} (hint: {hint})" if hint else text


def _start_hint(run_fn: Callable[..., Any]) -> str:
    """The start hint of the first input's model, if it has one."""
    for hinted in typing.get_type_hints(run_fn).values():
        name = getattr(hinted, "__name__", "")
        if name in START_HINTS:
            return START_HINTS[name]
    return ""
