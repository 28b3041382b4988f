"""Timeouts and retry policies for every activity the workflow calls, in one place."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

#: Task queues: workflows and short activities on the main queue; pollers on their own.
TASK_QUEUE = "npaflow"
POLL_TASK_QUEUE_SUFFIX = "-poll"
#: Activity error types that no retry can fix (mirrors activities/errors.py).
NON_RETRYABLE = ["SpecError", "ConfigurationError", "PayloadError", "LaunchUnidentified"]
#: A poller that cannot wait forever still needs a bound; unbounded waits get this.
UNBOUNDED_WAIT = timedelta(days=30)

SHORT_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                          maximum_interval=timedelta(seconds=30), maximum_attempts=8,
                          non_retryable_error_types=NON_RETRYABLE)
POLL_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                         maximum_interval=timedelta(seconds=30), maximum_attempts=50,
                         non_retryable_error_types=NON_RETRYABLE)


def poll_task_queue(main_queue: str) -> str:
    """The pollers' task queue that belongs to a main task queue."""
    return main_queue + POLL_TASK_QUEUE_SUFFIX


def heartbeat_timeout(poll_seconds: float) -> timedelta:
    """Long enough for one poll plus slack; a dead worker is noticed within it."""
    return timedelta(seconds=max(5.0, 3 * poll_seconds))


def wait_timeout(max_wait_seconds: float) -> timedelta:
    """start_to_close for a poller: the wave deadline plus room to report it."""
    if max_wait_seconds <= 0:
        return UNBOUNDED_WAIT
    return timedelta(seconds=max_wait_seconds + 300)
