"""`export_ledger`: merge a delta into `runtime.json` and rewrite manifest, status and spec."""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError
from temporalio import activity

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.catalog import ToolCatalog
from npaflow.context import build_run_context
from npaflow.document.models import WorkflowSpec
from npaflow.runtime.contract import (
    EXPORT_LEDGER,
    MANIFEST_FILE,
    RUNTIME_FILE,
    STATUS_FILE,
    ledger_file_uri,
    spec_file_uri,
)
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.messages import ExportLedgerInput, ExportResult
from npaflow.runtime.projection import derive_stages, manifest_document, status_document


def run_prefix_for(spec: WorkflowSpec, catalog: ToolCatalog, run_id: str, ledger_base: str) -> str:
    """`s3://<config.bucket>/<prefix>` when the spec names a bucket, else `<ledger base>/<prefix>`."""
    context = build_run_context(spec, catalog, run_id)
    prefix = str(context.config.get("prefix") or run_id).strip("/")
    bucket = str(context.config.get("bucket") or "").strip()
    if bucket:
        return f"s3://{bucket.removeprefix('s3://').strip('/')}/{prefix}"
    return f"{ledger_base.rstrip('/')}/{prefix}"


async def read_ledger(storage: StorageRouter, run_prefix_uri: str) -> RuntimeLedger | None:
    """Load the stored ledger, or None when there is none or it is not a ledger.

    Raises:
        NpaflowError: the ledger exists but cannot be read (access, transport): fail closed.
    """
    uri = ledger_file_uri(run_prefix_uri, RUNTIME_FILE)
    try:
        text = await storage.for_uri(uri).read_text(uri)
    except ArtifactMissingError:
        return None
    try:
        return RuntimeLedger.model_validate_json(text)
    except (ValidationError, ValueError):
        return None


class LedgerActivities:
    """Writes the audit ledger wherever the run's prefix points."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=EXPORT_LEDGER.name)
    @mapped_errors
    async def export_ledger(self, request: ExportLedgerInput) -> ExportResult:
        """Merge the delta (waves upserted by key and attempt) and rewrite every view."""
        storage = self.context.storage
        ledger = await read_ledger(storage, request.ledger_uri)
        if ledger is None or ledger.run_id != request.run_id:
            ledger = RuntimeLedger(workflow=request.workflow, run_id=request.run_id,
                                   api_version=request.api_version)
        ledger.run_prefix_uri = request.ledger_uri
        ledger.apply(request.delta, now=utc_now())
        ledger.stages = derive_stages(ledger)
        documents: dict[str, BaseModel] = {
            RUNTIME_FILE: ledger, MANIFEST_FILE: manifest_document(ledger, request.input_source),
            STATUS_FILE: status_document(ledger)}
        for name, document in documents.items():
            uri = ledger_file_uri(request.ledger_uri, name)
            text = json.dumps(document.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
            await storage.for_uri(uri).write_text(uri, text)
        if request.workflow_yaml:
            uri = spec_file_uri(request.ledger_uri)
            await storage.for_uri(uri).write_text(uri, request.workflow_yaml, "application/yaml")
        return ExportResult(runtime_state_uri=ledger_file_uri(request.ledger_uri, RUNTIME_FILE))
