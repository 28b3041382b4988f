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
refused by worker/input_count.py, a worker interceptor, before the workflow's code runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow
from temporalio.exceptions import ApplicationError

from npaflow.document.problems import refusal_text

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
