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
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

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


def _post(url: str, body: bytes, timeout: float) -> int:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
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
            status = await asyncio.to_thread(_post, url, body, self.timeout)
        except urllib.error.HTTPError as exc:
            return f"{name}: HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return f"{name}: {_hidden(str(reason), url)}"[:300]
        return "" if 200 <= status < 300 else f"{name}: HTTP {status}"
