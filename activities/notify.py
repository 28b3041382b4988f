"""`notify_run`: post a run's notification to the worker's webhooks.

The URLs come from the worker's environment (NPAFLOW_NOTIFY_URL) and never leave
this module: results and errors name a webhook by its number, and an error text
that quotes the URL is cut before it is returned or logged. One POST per webhook,
bounded by a timeout; a failure is reported, never raised, so the run's outcome
and timing do not depend on a chat server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass

import aiohttp
import structlog
from pydantic import SecretStr
from temporalio import activity

from npaflow.runtime.contract import NOTIFY_RUN
from npaflow.runtime.notifications import NotificationResult, RunNotification

log = structlog.get_logger(__name__)

#: Seconds one webhook may take to answer.
WEBHOOK_TIMEOUT_SECONDS = 5.0


def _hidden(text: str, url: str) -> str:
    return text.replace(url, "<webhook>") if url else text


async def _post(url: str, body: bytes, timeout: float) -> int:
    """POST once (no redirect followed: a webhook that moved is a misconfiguration to report)."""
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
        session.post(
            url, data=body, headers={"Content-Type": "application/json"}, allow_redirects=False
        ) as response,
    ):
        return int(response.status)


@dataclass(frozen=True)
class Notifier:
    """The worker's webhooks and the Temporal UI base URL for links."""

    webhooks: Sequence[SecretStr] = ()
    ui_url: str = ""
    timeout: float = WEBHOOK_TIMEOUT_SECONDS

    @activity.defn(name=NOTIFY_RUN.name)
    async def notify_run(self, note: RunNotification) -> NotificationResult:
        """POST the notification to every webhook once; say how each went."""
        if self.ui_url and not note.ui_url:
            namespace = activity.info().workflow_namespace
            note = note.model_copy(
                update={"ui_url": f"{self.ui_url.rstrip('/')}/namespaces/{namespace}/workflows/{note.run_id}"}
            )
        body = json.dumps(note.model_dump(mode="json")).encode()
        results = await asyncio.gather(
            *(self._deliver(index, url, body) for index, url in enumerate(self.webhooks))
        )
        errors = [error for error in results if error]
        for error in errors:
            log.warning("notify.undelivered", run_id=note.run_id, run_event=note.event.value, error=error)
        return NotificationResult(
            webhooks=len(self.webhooks), delivered=len(results) - len(errors), errors=errors
        )

    async def _deliver(self, index: int, secret: SecretStr, body: bytes) -> str:
        """Why the POST failed ("" when delivered); the URL itself never appears."""
        url, name = secret.get_secret_value(), f"webhook {index + 1} of {len(self.webhooks)}"
        try:
            status = await _post(url, body, self.timeout)
        except TimeoutError:
            return f"{name}: no answer in {self.timeout:g}s"
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return f"{name}: {_hidden(f'{type(exc).__name__}: {exc}', url)}"[:300]
        return "" if 200 <= status < 300 else f"{name}: HTTP {status}"
