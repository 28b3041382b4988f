"""Heartbeats for long activities: one typed details model, sent from a background task.

Heartbeats go out every few seconds however long a backend call takes, so the
heartbeat timeout only bounds how long a dead worker goes unnoticed; a retried
attempt resumes from the last details (job id, request id, deadlines' starts).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from pydantic import ValidationError
from temporalio import activity

from npaflow.errors import TransportError
from npaflow.runtime.messages import HeartbeatDetails

T = TypeVar("T")

#: Seconds between heartbeats (the SDK throttles further to 0.8 x heartbeat timeout).
HEARTBEAT_EVERY = 2.0
#: Backoff between attempts at an unreachable backend or store, capped.
RECOVERY_BACKOFF = (0.5, 10.0)
#: Characters of the newest error a heartbeat carries (status quotes it).
LAST_ERROR_CHARS = 500


def resume_details(**fresh: Any) -> HeartbeatDetails:
    """The last details an earlier attempt of this activity sent, else fresh ones."""
    for raw in activity.info().heartbeat_details or ():
        if isinstance(raw, dict):
            with contextlib.suppress(ValidationError):
                return HeartbeatDetails.model_validate(raw)
    return HeartbeatDetails(started_at=time.time(), **fresh)


class Heartbeater:
    """Holds the current details and sends them; `update` sends at once (first beat unthrottled).

    Within `quiet_seconds` of the start nothing is sent: the background beat sends the
    details then, so an activity that ends sooner costs the server no heartbeat.
    """

    def __init__(self, details: HeartbeatDetails, quiet_seconds: float = 0.0) -> None:
        self.details = details
        self._quiet_until = time.monotonic() + quiet_seconds

    def update(self, **changes: Any) -> None:
        """Change some fields and heartbeat them."""
        self.details = self.details.model_copy(update=changes)
        self.beat()

    def beat(self) -> None:
        """Send the current details (unless still quiet: the background beat sends them)."""
        if time.monotonic() >= self._quiet_until:
            activity.heartbeat(self.details.model_dump(mode="json"))

    async def recovering(self, what: str, call: Callable[[], Awaitable[T]], *, deadline_seconds: float) -> T:
        """Call until it stops raising TransportError, for at most `deadline_seconds` of errors.

        The start of the current run of errors is in the details, so the deadline
        survives a worker crash; success resets it.

        Raises:
            TransportError: still unreachable at the deadline (`recovery_exhausted`).
        """
        delay = RECOVERY_BACKOFF[0]
        while True:
            try:
                result = await call()
            except TransportError as exc:
                now = time.time()
                since = self.details.errors_since or now
                self.update(
                    errors_since=since,
                    consecutive_errors=self.details.consecutive_errors + 1,
                    last_error=f"{what}: {exc}"[:LAST_ERROR_CHARS],
                )
                if now - since >= deadline_seconds:
                    raise TransportError(
                        f"{what}: unreachable for {now - since:.0f}s "
                        f"(recovery deadline {deadline_seconds:g}s): {exc}",
                        recovery_exhausted=True,
                    ) from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECOVERY_BACKOFF[1])
                continue
            if self.details.errors_since:
                self.update(errors_since=0.0, consecutive_errors=0, last_error="")
            return result


@asynccontextmanager
async def heartbeating(details: HeartbeatDetails, *, quiet_start: bool = False) -> AsyncIterator[Heartbeater]:
    """Heartbeat `details` (as they change) every few seconds for the duration of the block.

    The first beat goes out at once, unless `quiet_start`: then only after HEARTBEAT_EVERY
    (for activities whose input already holds what an early beat would say).
    """
    beater = Heartbeater(details, HEARTBEAT_EVERY if quiet_start else 0.0)
    beater.beat()

    async def loop() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY)
            beater.beat()

    task = asyncio.create_task(loop())
    try:
        yield beater
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
