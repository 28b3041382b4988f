"""A payload past Temporal's limit fails by name where it is made, never a workflow task retried forever."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from activities.errors import mapped_errors
from npaflow.errors import ErrorType
from npaflow.runtime.contract import EXPORT_LEDGER
from workflows_def.activity_calls import sendable

pytestmark = pytest.mark.unit


class Blob(BaseModel):
    text: str


def test_an_activity_input_past_the_ceiling_fails_the_run_naming_the_activity_and_the_size() -> None:
    with pytest.raises(ApplicationError) as refused:
        sendable(EXPORT_LEDGER, Blob(text="x" * (3 * 1024 * 1024)))  # type: ignore[arg-type]
    assert refused.value.message.startswith("the input of export_ledger is 3.00 MiB, past Temporal's 2 MiB")
    assert "lower maxConcurrency" in refused.value.message
    assert refused.value.non_retryable and refused.value.type == ErrorType.SPEC.value


def test_an_activity_input_under_the_ceiling_goes_as_it_is() -> None:
    small = Blob(text="x")
    assert sendable(EXPORT_LEDGER, small) is small  # type: ignore[arg-type]


async def test_an_activity_result_past_the_ceiling_fails_the_activity_and_is_never_retried() -> None:
    @mapped_errors
    async def wide() -> Blob:
        return Blob(text="x" * (3 * 1024 * 1024))

    with pytest.raises(ApplicationError) as refused:
        await wide()
    assert refused.value.message.startswith("this activity's result is 3.00 MiB")
    assert refused.value.non_retryable and refused.value.type == ErrorType.CONFIGURATION.value
