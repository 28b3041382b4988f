"""Launch receipts: an accepted launch request written to the ledger before it is waited on.

A receipt outlives the heartbeat: when a worker dies between submitting and
resolving, the next attempt reads the request id back from
`<ledger>/launches/<job name>.json` (only when its launch token matches) and
resolves that request instead of submitting again.
"""

from __future__ import annotations

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.storage import ArtifactMissingError
from npaflow.errors import NpaflowError
from npaflow.render import RenderedWave
from npaflow.runtime.contract import LAUNCHES_DIR, ledger_file_uri
from npaflow.runtime.ledger import LaunchReceipt


class LaunchReceipts:
    """Reads and writes one launch attempt's receipt; what happened goes to its notes."""

    def __init__(
        self, context: ActivityContext, ledger_uri: str, rendered: RenderedWave, notes: list[str]
    ) -> None:
        self.context = context
        self.ledger_uri = ledger_uri
        self.rendered = rendered
        self.notes = notes

    async def request_id(self) -> str:
        """The request id an earlier attempt recorded for this exact launch ("" when none)."""
        if not self.ledger_uri:
            return ""
        uri = self._uri()
        try:
            text = await self.context.storage.for_uri(uri).read_text(uri)
            receipt = LaunchReceipt.model_validate_json(text)
        except (ArtifactMissingError, ValueError):
            return ""
        if receipt.launch_token != self.rendered.launch_token:
            return ""
        self.notes.append(f"found launch receipt {uri}")
        return receipt.request_id

    async def write(self, request_id: str) -> None:
        """Record the accepted launch before waiting on it (best effort: the heartbeat holds it too)."""
        if not self.ledger_uri:
            return
        uri = self._uri()
        receipt = LaunchReceipt(
            job_name=self.rendered.job_name,
            launch_token=self.rendered.launch_token,
            request_id=request_id,
            worker_id=self.context.worker_id,
            submitted_at=utc_now(),
        )
        try:
            await self.context.storage.for_uri(uri).write_text(uri, receipt.model_dump_json(indent=2))
        except NpaflowError as exc:
            self.notes.append(f"launch receipt not written ({exc}); the heartbeat holds the request id")

    def _uri(self) -> str:
        return ledger_file_uri(self.ledger_uri, f"{LAUNCHES_DIR}/{self.rendered.job_name}.json")
