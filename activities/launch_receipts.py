"""Launch receipts: every accepted launch, written to the ledger before it is waited on.

A receipt outlives the heartbeat: when a worker dies between submitting and
resolving, the next attempt reads the request id back from
`<ledger>/launches/<job name>.json` (only when its launch token matches) and
resolves that request instead of submitting again. And it outlives the run: a
run closed behind npaflow's back before its ledger named the job leaves only its
receipts, from which the ledger sweep (worker/ledger_sweep.py) finds the jobs.
"""

from __future__ import annotations

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.errors import NpaflowError
from npaflow.render import RenderedWave
from npaflow.runtime.contract import LAUNCHES_DIR, ledger_file_uri
from npaflow.runtime.ledger import LaunchReceipt
from npaflow.runtime.messages import LaunchWaveInput


class LaunchReceipts:
    """Reads and writes one launch attempt's receipt; what happened goes to its notes."""

    def __init__(
        self, context: ActivityContext, request: LaunchWaveInput, rendered: RenderedWave, notes: list[str]
    ) -> None:
        self.context = context
        self.ledger_uri = request.ledger_uri
        self.wave_key, self.attempt = str(request.wave.key), request.attempt
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
        if receipt.launch_token != self.rendered.launch_token or not receipt.request_id:
            return ""  # another launch's, or a job known at once (found by its name instead)
        self.notes.append(f"found launch receipt {uri}")
        return receipt.request_id

    async def write(self, request_id: str) -> None:
        """Record the accepted launch before waiting on it (best effort: the heartbeat holds it too).

        `request_id` is "" for a backend whose submit returns the job at once (local): the
        receipt still names the job's name and token, all a run closed before its ledger
        named the job leaves behind.
        """
        if not self.ledger_uri:
            return
        uri = self._uri()
        receipt = LaunchReceipt(
            job_name=self.rendered.job_name,
            launch_token=self.rendered.launch_token,
            request_id=request_id,
            worker_id=self.context.worker_id,
            submitted_at=utc_now(),
            wave_key=self.wave_key,
            attempt=self.attempt,
        )
        try:
            await self.context.storage.for_uri(uri).write_text(uri, receipt.model_dump_json(indent=2))
        except NpaflowError as exc:
            self.notes.append(f"launch receipt not written ({exc}); the heartbeat holds the request id")

    def _uri(self) -> str:
        return ledger_file_uri(self.ledger_uri, f"{LAUNCHES_DIR}/{self.rendered.job_name}.json")


async def run_receipts(storage: StorageRouter, ledger_uri: str) -> list[LaunchReceipt]:
    """Every launch receipt a run wrote, oldest job name first.

    Raises:
        NpaflowError: a receipt could not be listed or read (never read as "none").
        ValueError: a receipt is not one.
    """
    prefix = ledger_file_uri(ledger_uri, f"{LAUNCHES_DIR}/")
    receipts = []
    for key in sorted(await storage.for_uri(prefix).list_keys(prefix)):
        text = await storage.for_uri(prefix + key).read_text(prefix + key)
        receipts.append(LaunchReceipt.model_validate_json(text))
    return receipts
