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
from npaflow.document.models import WorkflowSpec
from npaflow.errors import NpaflowError, SpecError, SpecIssue
from npaflow.plan import ExecutionPlan, build_plan, plan_fingerprint
from npaflow.plan_diff import PlanDiff, diff_plans
from npaflow.runtime.contract import (
    EXPORT_LEDGER,
    LOAD_SPEC,
    MANIFEST_FILE,
    RUNTIME_FILE,
    STATUS_FILE,
    ledger_file_uri,
    spec_file_uri,
)
from npaflow.runtime.ledger import PlanChangeRecord, RuntimeLedger
from npaflow.runtime.locations import run_prefix_for
from npaflow.runtime.messages import (
    ExportLedgerInput,
    ExportResult,
    LoadedSpec,
    LoadSpecInput,
    PriorRun,
)
from npaflow.runtime.projection import derive_stages, manifest_document, status_document
from npaflow.spec import load_spec_from_str

MAX_LOADED_SPEC_BYTES = 1_800_000
"""Below Temporal's 2 MB payload limit, with room for the rest of the activity result."""


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


def _check_payload_size(loaded: LoadedSpec, source: str) -> None:
    """Refuse a spec whose loaded form Temporal cannot carry (it would be retried forever)."""
    size = len(loaded.model_dump_json().encode())
    if size > MAX_LOADED_SPEC_BYTES:
        raise SpecError(
            [
                SpecIssue(
                    file=source,
                    message=f"the loaded spec is {size / 2**20:.1f} MiB; a run's spec must "
                    f"load to at most {MAX_LOADED_SPEC_BYTES / 2**20:.1f} MiB (Temporal payloads are "
                    "limited to 2 MB)",
                    hint="split the workflow into smaller specs, or shorten "
                    "repeated blocks (YAML aliases are expanded when the spec loads)",
                )
            ]
        )


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
                raise SpecError(
                    [
                        SpecIssue(
                            file=request.spec_uri,
                            message="workflow spec not found",
                            hint="check spec_uri; it must be readable by the worker",
                        )
                    ]
                ) from None
        catalog = load_catalogs([*self.context.catalog_paths, *request.catalogs])
        spec = load_spec_from_str(
            text, source if request.spec_uri else "<inline spec>", catalog=catalog, overrides=request.vars
        )
        used = {ref: catalog.tools[ref] for ref in {s.tool_ref for s in spec.states.values()} if ref}
        tools = ToolCatalog(tools=used)
        ledger_uri = run_prefix_for(spec, tools, request.run_id, self.context.ledger_base())
        plan = build_plan(spec, tools, run_id=request.run_id, assume_decision=request.assume_decision)
        fingerprint = plan_fingerprint(plan)
        ledger = await read_ledger(self.context.storage, ledger_uri)
        change = request.accepted_change
        accepted: PlanChangeRecord | None = None
        if ledger is not None and ledger.run_id == request.run_id and ledger.plan_fingerprint:
            matches = change is not None and (change.from_fingerprint, change.to_fingerprint) == (
                ledger.plan_fingerprint,
                fingerprint,
            )
            if ledger.plan_fingerprint != fingerprint and not matches:
                diff = await self._diff_from_ledger(
                    ledger, ledger_uri, spec, plan, catalog, request, fingerprint
                )
                lines = (
                    diff.text_lines()
                    if diff is not None
                    else [f"(the recorded spec {spec_file_uri(ledger_uri)} could not be read to compare)"]
                )
                acceptable = diff is not None and not diff.affected_completed_waves
                raise SpecError(
                    [
                        SpecIssue(
                            file=source,
                            message=f"refusing to resume run '{request.run_id}': its plan "
                            f"changed since it ran (fingerprint {ledger.plan_fingerprint} -> {fingerprint})"
                            + "".join(f"\n  {line}" for line in lines),
                            hint="resume with the spec and --var values the run started with"
                            + (
                                ", or accept the change: "
                                "npaflow resume RUN_ID --spec NEW.yaml --accept-changes"
                                if acceptable
                                else "; the change touches completed waves, so run it under a new run id"
                            ),
                        )
                    ]
                )
            if matches and change is not None:
                accepted = PlanChangeRecord(
                    from_fingerprint=change.from_fingerprint,
                    to_fingerprint=change.to_fingerprint,
                    changes=change.changes,
                    accepted_by=change.accepted_by,
                )
        prior = (
            PriorRun(waves=ledger.waves, decisions=ledger.decisions, watermarks=ledger.watermarks)
            if ledger is not None and ledger.run_id == request.run_id
            else PriorRun()
        )
        loaded = LoadedSpec(
            spec=spec,
            catalog=tools,
            workflow_yaml=_with_vars(text, request.vars),
            ledger_uri=ledger_uri,
            input_source=source,
            plan_fingerprint=fingerprint,
            prior=prior,
            accepted_change=accepted,
        )
        _check_payload_size(loaded, source)
        return loaded

    async def _diff_from_ledger(
        self,
        ledger: RuntimeLedger,
        ledger_uri: str,
        spec: WorkflowSpec,
        plan: ExecutionPlan,
        catalog: ToolCatalog,
        request: LoadSpecInput,
        fingerprint: str,
    ) -> PlanDiff | None:
        """The change against the spec the ledger recorded (what ran); None if that is unreadable."""
        uri = spec_file_uri(ledger_uri)
        try:
            old_text = await self.context.storage.for_uri(uri).read_text(uri)
            old_spec = load_spec_from_str(old_text, uri, catalog=catalog)
        except (NpaflowError, ValueError):
            return None
        old_plan = build_plan(
            old_spec, catalog, run_id=request.run_id, assume_decision=request.assume_decision
        )
        completed = [w.key for w in ledger.latest_attempts().values() if w.succeeded()]
        return diff_plans(
            old_spec,
            old_plan,
            spec,
            plan,
            completed=completed,
            old_fingerprint=ledger.plan_fingerprint,
            new_fingerprint=fingerprint,
        )

    @activity.defn(name=EXPORT_LEDGER.name)
    @mapped_errors
    async def export_ledger(self, request: ExportLedgerInput) -> ExportResult:
        """Merge the delta (waves upserted by key and attempt) and rewrite every view."""
        storage = self.context.storage
        ledger = await read_ledger(storage, request.ledger_uri)
        if ledger is None or ledger.run_id != request.run_id:
            ledger = RuntimeLedger(
                workflow=request.workflow, run_id=request.run_id, api_version=request.api_version
            )
        ledger.run_prefix_uri = request.ledger_uri
        ledger.apply(request.delta, now=utc_now())
        ledger.stages = derive_stages(ledger)
        documents: dict[str, BaseModel] = {
            RUNTIME_FILE: ledger,
            MANIFEST_FILE: manifest_document(ledger, request.input_source),
            STATUS_FILE: status_document(ledger),
        }
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
