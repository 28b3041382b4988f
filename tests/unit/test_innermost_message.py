"""What the CLI shows of a failed worker call: npaflow's own words, never the library's beneath them."""

from __future__ import annotations

import asyncio

import pytest
from botocore.exceptions import NoCredentialsError
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DataConverter
from temporalio.exceptions import ActivityError, ApplicationError, RetryState

from activities.errors import to_application_error
from activities.storage.s3 import classify_s3_error
from npaflow.temporal.errors import innermost_message

pytestmark = pytest.mark.unit


def _through_temporal(error: BaseException) -> BaseException:
    """The error as a client receives it: encoded to a Failure by the worker, decoded by the CLI."""
    failure = Failure()
    converter = DataConverter.default
    converter.failure_converter.to_failure(error, converter.payload_converter, failure)
    return converter.failure_converter.from_failure(failure, converter.payload_converter)


def _raised(error: BaseException, cause: BaseException) -> BaseException:
    try:
        raise error from cause
    except BaseException as raised:  # noqa: BLE001 - kept with its __cause__
        return raised


def _activity_failure(cause: BaseException) -> ActivityError:
    wrapper = ActivityError(
        "Activity task failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="worker",
        activity_type="cache_admin",
        activity_id="1",
        retry_state=RetryState.NON_RETRYABLE_FAILURE,
    )
    wrapper.__cause__ = cause
    return wrapper


def test_missing_s3_credentials_read_as_npaflows_message_with_its_fix() -> None:
    library = NoCredentialsError()
    ours = _raised(classify_s3_error(library, "s3://bucket/cache/"), library)
    sent = _raised(to_application_error(ours), ours)  # type: ignore[arg-type]
    received = _activity_failure(_through_temporal(sent))

    message = innermost_message(received)

    assert message.startswith("s3://bucket/cache/: no usable S3 credentials")
    assert "AWS_ACCESS_KEY_ID" in message
    assert "Unable to locate credentials" not in message


def test_an_error_with_no_npaflow_type_shows_its_innermost_cause() -> None:
    inner = ApplicationError("disk quota exceeded", type="OSError")
    outer = _raised(ApplicationError("wrapper words", type="RuntimeError"), inner)

    assert innermost_message(_activity_failure(_through_temporal(outer))) == "disk quota exceeded"


def test_a_cancelled_call_still_has_a_message() -> None:
    assert innermost_message(asyncio.CancelledError("stopped")) == "stopped"
