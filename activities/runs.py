"""The run's own files: `load_spec` reads its spec and prior ledger; `export_ledger` writes it.

The ledger lives at `<run prefix>/npa-workflow/` (contract.LEDGER_DIR): the
spec's `config.bucket`, else the worker's shared NPAFLOW_LEDGER_ROOT, else
`$NPAFLOW_HOME/runs`.
"""

from __future__ import annotations

import json

import yaml
from pydantic import BaseModel, ValidationError
from temporalio import activity

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.storage import ArtifactMissingError, StorageRouter
from npaflow.catalog import ToolCatalog, load_catalogs
from npaflow.context import build_run_context
from npaflow.document.models import WorkflowSpec
from npaflow.errors import SpecError, SpecIssue
from npaflow.plan import build_plan, plan_fingerprint
from npaflow.runtime.contract import (
    EXPORT_LEDGER,
    LOAD_SPEC,
    MANIFEST_FILE,
    RUNTIME_FILE,
    STATUS_FILE,
    ledger_file_uri,
    spec_file_uri,
)
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.messages import (
    ExportLedgerInput,
    ExportResult,
    LoadedSpec,
    LoadSpecInput,
    PriorRun,
)
from npaflow.runtime.projection import derive_stages, manifest_document, status_document
from npaflow.spec import load_spec_from_str


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


class RunActivities:
    """Activities about the run as a whole: load its spec (and what its ledger holds), export it."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=LOAD_SPEC.name)
    @mapped_errors
    async def load_spec(self, request: LoadSpecInput) -> LoadedSpec:
        """Return the validated spec, the tools it uses, its ledger location and prior waves."""
        text, source = request.spec, "inline"
        if request.spec_uri:
            source = request.spec_uri
            try:
                text = await self.context.storage.for_uri(request.spec_uri).read_text(request.spec_uri)
            except ArtifactMissingError:
                raise SpecError([SpecIssue(
                    file=request.spec_uri, message="workflow spec not found",
                    hint="check spec_uri; it must be readable by the worker")]) from None
        catalog = load_catalogs([*self.context.catalog_paths, *request.catalogs])
        spec = load_spec_from_str(text, source if request.spec_uri else "<inline spec>",
                                  catalog=catalog, overrides=request.vars)
        used = {ref: catalog.tools[ref] for ref in {s.tool_ref for s in spec.states.values()} if ref}
        tools = ToolCatalog(tools=used)
        ledger_uri = run_prefix_for(spec, tools, request.run_id, self.context.ledger_base())
        fingerprint = plan_fingerprint(build_plan(spec, tools, run_id=request.run_id,
                                                  assume_decision=request.assume_decision))
        ledger = await read_ledger(self.context.storage, ledger_uri)
        if ledger is not None and ledger.run_id == request.run_id and ledger.plan_fingerprint \
                and ledger.plan_fingerprint != fingerprint:
            raise SpecError([SpecIssue(
                file=source, message=f"refusing to resume run '{request.run_id}': the recorded "
                f"ledger describes a different plan (fingerprint {ledger.plan_fingerprint} != "
                f"{fingerprint})", hint="resume with the spec, --var values and --assume-decision "
                "the run started with, or start a new run id")])
        prior = (PriorRun(waves=ledger.waves, decisions=ledger.decisions, watermarks=ledger.watermarks)
                 if ledger is not None and ledger.run_id == request.run_id else PriorRun())
        return LoadedSpec(spec=spec, catalog=tools, workflow_yaml=_with_vars(text, request.vars),
                          ledger_uri=ledger_uri, input_source=source, plan_fingerprint=fingerprint,
                          prior=prior)


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


def _with_vars(text: str, overrides: dict[str, str]) -> str:
    """The submitted YAML with `--var` overrides merged into config (what actually ran)."""
    if not overrides:
        return text
    document = yaml.safe_load(text) or {}
    document["config"] = {**(document.get("config") or {}), **overrides}
    return yaml.safe_dump(document, sort_keys=False)
