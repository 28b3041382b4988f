"""`export_ledger`: merge a delta into `runtime.json` and rewrite manifest, status and spec."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError
from temporalio import activity

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.catalog import ToolCatalog
from npaflow.context import build_run_context
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.messages import ExportLedgerInput, ExportResult, PriorRun
from npaflow.runtime.projection import derive_stages, manifest_document, status_document
from npaflow.spec.models import WorkflowSpec

LEDGER_DIR = "npa-workflow"


def ledger_root_for(spec: WorkflowSpec, catalog: ToolCatalog, run_id: str, home: Path) -> str:
    """`s3://<bucket>/<prefix>` with config.bucket, else `file://<home>/runs/<prefix>`."""
    context = build_run_context(spec, catalog, run_id)
    prefix = str(context.config.get("prefix") or run_id).strip("/")
    bucket = str(context.config.get("bucket") or "").strip()
    if bucket:
        return f"s3://{bucket.removeprefix('s3://').strip('/')}/{prefix}"
    return f"file://{home.resolve()}/runs/{prefix}"


def runtime_state_uri(ledger_uri: str) -> str:
    """Where `runtime.json` lives under a run prefix."""
    return f"{ledger_uri}/{LEDGER_DIR}/runtime.json"


async def read_ledger(storage: StorageRouter, ledger_uri: str) -> RuntimeLedger | None:
    """Load the stored ledger, or None when there is none (or it cannot be parsed)."""
    uri = runtime_state_uri(ledger_uri)
    try:
        text = await storage.for_uri(uri).read_text(uri)
        return RuntimeLedger.model_validate_json(text)
    except (ArtifactMissingError, ValidationError, ValueError):
        return None


async def read_prior_run(storage: StorageRouter, ledger_uri: str, run_id: str) -> PriorRun:
    """Return what an earlier execution of this run id recorded (nothing for another run)."""
    ledger = await read_ledger(storage, ledger_uri)
    if ledger is None or ledger.run_id != run_id:
        return PriorRun()
    return PriorRun(waves=ledger.waves, decisions=ledger.decisions, watermarks=ledger.watermarks)


class LedgerActivities:
    """Writes the audit ledger wherever the run's prefix points."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name="export_ledger")
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
        base = f"{request.ledger_uri}/{LEDGER_DIR}"
        documents = {
            f"{base}/runtime.json": ledger.model_dump(mode="json"),
            f"{base}/manifest.json": manifest_document(ledger, request.input_source),
            f"{base}/status.json": status_document(ledger),
        }
        for uri, document in documents.items():
            text = json.dumps(document, indent=2, sort_keys=True) + "\n"
            await storage.for_uri(uri).write_text(uri, text)
        if request.workflow_yaml:
            uri = f"{request.ledger_uri}/workflow.yaml"
            await storage.for_uri(uri).write_text(uri, request.workflow_yaml, "application/yaml")
        return ExportResult(runtime_state_uri=runtime_state_uri(request.ledger_uri))
