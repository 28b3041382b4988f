"""`export_ledger`: merge a run's delta into its `npa.workflow.runtime.v1` ledger and its views.

The ledger lives at `<run prefix>/npa-workflow/` (contract.LEDGER_DIR): the
spec's `config.bucket`, else the worker's shared NPAFLOW_LEDGER_ROOT, else
`$NPAFLOW_HOME/runs`. A worker keeps each run's document in memory between
exports (`LedgerCache`) and reuses it while the stored `runtime.json` is the one
it wrote last, so an export costs what changed, not the length of the run.

Storage errors on the ledger are retried until the ledger deadline
(workflows_def/activity_calls.py), permission errors included: on shared file
systems and S3 policies they are often transient, and a run must not fail,
nor its ledger stop, because a directory was briefly unwritable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from pydantic import ValidationError
from temporalio import activity

from activities.clock import utc_now
from activities.errors import mapped_errors
from activities.storage import MAX_LEDGER_BYTES, ArtifactMissingError, StorageRouter, TextWrite
from npaflow.errors import AccessDeniedError, ConfigurationError, TransportError
from npaflow.runtime.contract import (
    EXPORT_LEDGER,
    MANIFEST_FILE,
    RUNTIME_FILE,
    STATUS_FILE,
    ledger_file_uri,
    spec_file_uri,
)
from npaflow.runtime.ledger import LedgerDelta, RuntimeLedger
from npaflow.runtime.ledger.document import LedgerDocument
from npaflow.runtime.ledger.projection import InputSource
from npaflow.runtime.messages import ExportLedgerInput, ExportResult
from npaflow.runtime.vocabulary import LedgerStatus

log = structlog.get_logger(__name__)

#: Called with (run prefix, ledger, spec text or "") by each export of a run that has ended.
EndHook = Callable[[str, RuntimeLedger, str], Awaitable[None]]
#: Runs whose documents a worker keeps between exports (least recently exported are dropped).
MAX_CACHED_LEDGERS = 256


async def read_ledger(storage: StorageRouter, run_prefix_uri: str) -> RuntimeLedger | None:
    """Load the stored ledger, or None when there is none.

    Raises:
        ConfigurationError: a file is there but it is not a ledger npaflow can merge into
            (never overwritten as if there were none).
        NpaflowError: the ledger cannot be read (access, transport): fail closed.
    """
    uri = ledger_file_uri(run_prefix_uri, RUNTIME_FILE)
    try:
        text = await storage.for_ledger(uri).read_text(uri, max_bytes=MAX_LEDGER_BYTES)
    except ArtifactMissingError:
        return None
    try:
        return RuntimeLedger.model_validate_json(text)
    except (ValidationError, ValueError) as exc:
        raise ConfigurationError(
            f"{uri} is not an npa.workflow.runtime.v1 ledger npaflow can read ({str(exc)[:300]}); "
            "move it away or choose another config.prefix / run id"
        ) from None


class LedgerCache:
    """Each run's ledger document as this worker last wrote it, with the stored version."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[str, LedgerDocument]] = {}

    def get(self, uri: str, version: str | None) -> LedgerDocument | None:
        """The cached document, if the stored file is still the one written from it."""
        entry = self._entries.get(uri)
        if entry is None or version is None or entry[0] != version:
            return None
        self._entries[uri] = self._entries.pop(uri)  # most recently used last
        return entry[1]

    def put(self, uri: str, version: str, document: LedgerDocument) -> None:
        """Remember what was just written."""
        self._entries.pop(uri, None)
        self._entries[uri] = (version, document)
        while len(self._entries) > MAX_CACHED_LEDGERS:
            self._entries.pop(next(iter(self._entries)))

    def forget(self, uri: str) -> None:
        """Drop a run whose write failed: the next export reads the stored file afresh."""
        self._entries.pop(uri, None)


class LedgerActivities:
    """The ledger export, with this worker's document cache."""

    def __init__(self, storage: StorageRouter, cache: LedgerCache, on_end: EndHook | None = None) -> None:
        self.storage = storage
        self.cache = cache
        self.on_end = on_end  # writes report.html once the ledger says the run ended

    @activity.defn(name=EXPORT_LEDGER.name)
    @mapped_errors
    async def export_ledger(self, request: ExportLedgerInput) -> ExportResult:
        """Merge the delta (waves upserted by key and attempt) and rewrite every view."""
        return await self.merge(request)

    async def merge(
        self, request: ExportLedgerInput, amend: Callable[[RuntimeLedger], LedgerDelta] | None = None
    ) -> ExportResult:
        """Merge a delta into the stored ledger; `amend` derives one from what is stored (reconciler)."""
        result, _ = await self.merge_reading(request, amend)
        return result

    async def merge_reading(
        self, request: ExportLedgerInput, amend: Callable[[RuntimeLedger], LedgerDelta] | None = None
    ) -> tuple[ExportResult, RuntimeLedger]:
        """`merge`, also giving the ledger as merged (the reconciler reports what it says now)."""
        runtime_uri = ledger_file_uri(request.ledger_uri, RUNTIME_FILE)
        try:
            document = await self._document(request, runtime_uri)
            delta = amend(document.ledger) if amend is not None else request.delta
            document.apply(delta, run_prefix_uri=request.ledger_uri, now=utc_now())
            version = await self._write(request, document, runtime_uri)
        except AccessDeniedError as exc:
            self.cache.forget(runtime_uri)
            raise TransportError(f"ledger {request.ledger_uri} not writable yet: {exc}") from exc
        except BaseException:
            self.cache.forget(runtime_uri)
            raise
        self.cache.put(runtime_uri, version, document)
        return ExportResult(runtime_state_uri=runtime_uri), document.ledger

    async def _document(self, request: ExportLedgerInput, runtime_uri: str) -> LedgerDocument:
        storage = self.storage.for_ledger(runtime_uri)
        cached = self.cache.get(runtime_uri, await storage.version(runtime_uri))
        if cached is not None:
            return cached
        ledger = await read_ledger(self.storage, request.ledger_uri)
        if ledger is None or ledger.run_id != request.run_id:
            ledger = RuntimeLedger(
                workflow=request.workflow, run_id=request.run_id, api_version=request.api_version
            )
        return LedgerDocument(ledger, InputSource(spec=request.input_source))

    async def _write(self, request: ExportLedgerInput, document: LedgerDocument, runtime_uri: str) -> str:
        """Views first, runtime.json last: its version says the whole export landed."""
        views = [
            TextWrite(ledger_file_uri(request.ledger_uri, MANIFEST_FILE), document.manifest_text()),
            TextWrite(ledger_file_uri(request.ledger_uri, STATUS_FILE), document.status_text()),
        ]
        if request.workflow_yaml:
            views.append(
                TextWrite(spec_file_uri(request.ledger_uri), request.workflow_yaml, "application/yaml")
            )
        storage = self.storage.for_ledger(runtime_uri)  # one prefix: the views share runtime.json's adapter
        if self.on_end is not None and document.status is not LedgerStatus.RUNNING:
            await storage.write_texts(views)
            await self.on_end(request.ledger_uri, document.ledger, request.workflow_yaml)
            views = []
        written = await storage.write_texts([*views, TextWrite(runtime_uri, document.runtime_text())])
        return written[-1]
