"""A workflow whose input does not validate fails at once, with the data converter's one-line text.

Without this the SDK fails the workflow *task* ("Failed decoding arguments") and
retries it forever: a raw `temporal workflow start` with a typo would sit stuck under
the id the CLI or a worker needs next. Runs and helper workflows list the
ValidationError in `failure_exception_types`. The long-lived coordinators (quota
pools, cache flights) take their carried state undecoded and read it with
`carried_state`: a first start that does not validate is refused the same way, so
`npaflow quota set` can start the pool afresh, while a continued one that a new
deploy cannot read retries its task, so a fixed deploy resumes it with its state.
A start with too few or too many inputs (`--input` left out or given twice) is
refused by `InputCount`, a worker interceptor, before the workflow's code runs.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from npaflow.document.problems import START_HINTS, refusal_text

#: `failure_exception_types` of every run and helper workflow.
MALFORMED_INPUT: Sequence[type[BaseException]] = (ValidationError,)

Carried = TypeVar("Carried", bound=BaseModel)


class UnreadableCarriedState(RuntimeError):
    """A continued coordinator's state does not validate: the task fails and retries (no state is lost)."""


def refused(text: str) -> ApplicationError:
    """The failure that ends a workflow started with input it cannot take (never retried)."""
    return ApplicationError(text, type=ValidationError.__name__, non_retryable=True)


def continued_as_new() -> bool:
    """Whether this workflow run carries on an earlier one (its input is state it wrote itself)."""
    return workflow.info().continued_run_id is not None


def carried_state(value: object, model: type[Carried], *, continued: bool) -> Carried | None:
    """`value` (the JSON a coordinator was started with) as `model`; None when it was given none.

    Raises:
        ApplicationError: a first start's input does not validate (the workflow fails).
        UnreadableCarriedState: a continued run's carried state does not validate.
    """
    if value is None:
        return None
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        if continued:
            raise UnreadableCarriedState(refusal_text(exc)) from exc
        raise refused(refusal_text(exc)) from None


class InputCount(Interceptor):
    """Refuses a workflow started with the wrong number of inputs.

    The SDK would call the run method anyway; its TypeError fails the workflow task,
    which Temporal retries forever: a raw start without `--input` sat stuck under its id.
    """

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
