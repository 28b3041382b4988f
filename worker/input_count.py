"""Refuses a workflow, signal or update given too few or too many inputs, before its code runs.

The SDK would call the handler anyway: its TypeError fails the workflow task,
which Temporal retries forever. A raw `temporal workflow start` without `--input`
sat stuck under its id, and a `temporal workflow signal` of `quota_answer` with no
input made every later task of its run fail, so the run could not even be
cancelled. Now a start is failed at once, a signal is dropped with one warning
(as the SDK drops one whose input does not decode), and an update fails alone.
An input given to a handler that takes none never reaches this check: the SDK
decodes none of it (its type hints are an empty list), so such a signal is obeyed.
Installed on the main worker and the replayer.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any

from temporalio import workflow
from temporalio.worker import (
    ExecuteWorkflowInput,
    HandleSignalInput,
    HandleUpdateInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)
from temporalio.workflow import _Definition  # the SDK's own table of a workflow's handlers

from npaflow.document.problems import START_HINTS
from workflows_def.input_refusal import refused


class InputCount(Interceptor):
    """Checks every workflow's start, signals and updates for the number of inputs their code takes."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        """Every workflow's inbound calls pass through the count check."""
        return _CountedInputs


class _CountedInputs(WorkflowInboundInterceptor):
    """Compares the inputs given with the handler's parameters before calling it."""

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        name = workflow.info().workflow_type
        problem = count_problem(name, input.run_fn, len(input.args))
        if problem:
            hint = _start_hint(input.run_fn)
            raise refused(f"{problem} (hint: {hint})" if hint else problem)
        return await super().execute_workflow(input)

    async def handle_signal(self, input: HandleSignalInput) -> None:
        problem = _handler_problem("signal", input.signal, input.args)
        if problem:
            workflow.logger.warning("%s: the signal is dropped and the workflow goes on", problem)
            return
        await super().handle_signal(input)

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        _refuse_miscounted_update(input)  # rejected before it is accepted: nothing is recorded
        super().handle_update_validator(input)

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        _refuse_miscounted_update(input)  # an update with no validator fails alone; the workflow goes on
        return await super().handle_update_handler(input)


def _refuse_miscounted_update(input: HandleUpdateInput) -> None:
    problem = _handler_problem("update", input.update, input.args)
    if problem:
        raise refused(problem)


def count_problem(what: str, fn: Callable[..., Any], given: int) -> str:
    """What is wrong with calling the method `fn` with `given` inputs ("" when it takes them)."""
    parameters = list(inspect.signature(fn).parameters.values())[1:]  # past self
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return ""
    least = sum(p.default is inspect.Parameter.empty for p in parameters)
    if least <= given <= len(parameters):
        return ""
    wanted = str(least) if least == len(parameters) else f"{least} to {len(parameters)}"
    return f"{what} takes {wanted} input(s), got {given}"


def _handler_problem(kind: str, name: str, args: Sequence[Any]) -> str:
    definition = _Definition.from_class(type(workflow.instance()))
    if definition is None:
        return ""
    handlers = definition.signals if kind == "signal" else definition.updates
    handler = handlers.get(name)
    if handler is None or not handler.is_method:
        return ""  # a dynamic handler takes what comes
    return count_problem(f"{kind} {name!r} of {definition.name}", handler.fn, len(args))


def _start_hint(run_fn: Callable[..., Any]) -> str:
    """The start hint of the first input's model, if it has one."""
    for hinted in typing.get_type_hints(run_fn).values():
        name = getattr(hinted, "__name__", "")
        if name in START_HINTS:
            return START_HINTS[name]
    return ""
