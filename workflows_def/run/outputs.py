"""How an attempt settles: its outcome, its declared outputs checked, why a failed job failed.

Fail closed: outputs that cannot be checked are never read as present or as missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from temporalio.exceptions import is_cancelled_exception

from npaflow.errors import NpaflowError
from npaflow.runtime.contract import CHECK_OUTPUTS
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.messages import AwaitEnd, AwaitResult, CheckOutputsInput
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass
from npaflow.waves import WaveKey, states_where
from workflows_def.activity_calls import (
    ACTIVITY_FAILURES,
    PERSISTENT_RETRY,
    call_local,
    classify_activity_error,
)


@dataclass
class AttemptOutcome:
    """How one attempt ended, and which budget a failure spends."""

    ok: bool
    error: str = ""
    failure_class: FailureClass = FailureClass.PAYLOAD
    kept: bool = False  # timed out and left running on purpose: never retried
    fail_closed: bool = False  # the job may still run (lost, cancel unverified): never relaunched


class OutputsUnreadableError(NpaflowError):
    """Declared outputs could not be checked: never read as present or as missing."""

    def __init__(self, message: str, failure_class: FailureClass) -> None:
        super().__init__(message)
        self.failure_class = failure_class


async def missing_outputs(
    request: RunRequest, key: WaveKey | None, uris: list[str], *, states: Sequence[str] = ()
) -> list[str]:
    """The declared outputs (of wave `key`, else of `states`) that definitely do not exist.

    Raises:
        OutputsUnreadableError: they could not be checked (no access, storage down too long).
    """
    if not uris:
        return []
    names, whose = ", ".join(key.states if key else states), f"wave {key}" if key else "its members"
    deadline = timedelta(seconds=max(300.0, request.transport_recovery_seconds))
    try:
        result = await call_local(
            CHECK_OUTPUTS,
            CheckOutputsInput(wave_key=key, uris=uris),
            schedule_to_close_timeout=deadline,
            retry_policy=PERSISTENT_RETRY,
            summary=f"check {len(uris)} declared output(s) of {names}",
        )
    except ACTIVITY_FAILURES as error:
        if is_cancelled_exception(error):
            raise
        failure_class, message = classify_activity_error(error)
        raise OutputsUnreadableError(
            f"state {names}: cannot check the declared outputs of {whose}: {message}",
            failure_class,
        ) from None
    return result.missing


def failure_class_of(result: AwaitResult) -> FailureClass:
    """The class of an await that ended without a terminal status (or with one it named)."""
    if result.failure_class is not None:
        return result.failure_class
    if result.end is AwaitEnd.CAPACITY_TIMEOUT:
        return FailureClass.CAPACITY
    if result.end is AwaitEnd.UNREADABLE:
        return FailureClass.TRANSPORT
    return FailureClass.PAYLOAD  # a timeout: the job ran too long


def failure_text(record: WaveAttemptRecord, result: AwaitResult, reason: str) -> str:
    """A failed job's error: which state and attempt, the job, why, and how its log ends."""
    where = states_where(record.states, record.items) + (
        f" (attempt {record.attempt})" if record.attempt > 1 else ""
    )
    text = f"state {where}: job {record.job_id} reached terminal status {result.status.value}" + (
        f": {reason}" if reason else ""
    )
    if result.log_tail:
        text += "; its log ends:\n" + "\n".join(f"  | {line}" for line in result.log_tail.splitlines())
    return text
