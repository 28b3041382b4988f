"""`load_spec`: read a run's spec and what its ledger already holds (activities/ledger.py writes it).

Only what the walk needs of earlier executions travels back: the newest attempt
of each wave, without its observation history (the ledger keeps that), so a
run of thousands of waves still continues-as-new within Temporal's payload limit.
"""

from __future__ import annotations

import yaml
from temporalio import activity

from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.ledger import read_ledger
from activities.load_refusals import another_runs_ledger, changed_plan_error
from activities.spec_delivery import SpecDelivery
from activities.storage import MAX_SPEC_READ_BYTES, ArtifactMissingError
from npaflow.catalog import ToolCatalog, load_catalogs
from npaflow.context import build_run_context
from npaflow.document.models import WorkflowSpec
from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import NpaflowError, SpecError, SpecIssue
from npaflow.plan import ExecutionPlan, build_plan, plan_fingerprint
from npaflow.plan_diff import PlanDiff, diff_plans
from npaflow.runtime.contract import LOAD_SPEC, spec_file_uri
from npaflow.runtime.ledger import FinishedWave, PlanChangeRecord, RuntimeLedger, attempt_usage
from npaflow.runtime.loaded import AttemptUsage, LoadedSpec, LoadSpecInput, PriorRun
from npaflow.runtime.locations import cache_root_for, run_prefix_for
from npaflow.runtime.spec_parts import SpecLoad
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.spec import load_spec_from_str
from npaflow.spec.decision_sources import decision_source_issues
from npaflow.spec.typos import unknown_var_issues


class RunActivities:
    """Activities about the run as a whole: load its spec (and what its ledger holds), export it."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context
        self.delivery = SpecDelivery(context)

    @activity.defn(name=LOAD_SPEC.name)
    @mapped_errors
    async def load_spec(self, request: LoadSpecInput) -> SpecLoad:
        """Return the validated spec, the tools it uses, its ledger location and prior waves."""
        text, source = await self._spec_text(request)
        catalog = load_catalogs([*self.context.catalog_paths, *request.catalogs])
        label = source if request.spec_uri else "<inline spec>"
        spec = load_spec_from_str(text, label, catalog=catalog, overrides=request.vars)
        used = {ref: catalog.tools[ref] for ref in {s.tool_ref for s in spec.states.values()} if ref}
        tools = ToolCatalog(tools=used)
        _refuse_what_would_change_meaning(request, spec, catalog, tools, text, label)
        ledger_uri = run_prefix_for(spec, tools, request.run_id, self.context.ledger_base())
        plan = build_plan(spec, tools, run_id=request.run_id, assume_decision=request.assume_decision)
        fingerprint = plan_fingerprint(plan, spec)
        ledger = await read_ledger(self.context.storage, ledger_uri)
        if ledger is not None and ledger.run_id != request.run_id:
            raise another_runs_ledger(request.run_id, source, ledger_uri, ledger)
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
                if diff is None or not diff.is_empty():  # empty: only the fingerprint's form changed
                    raise changed_plan_error(
                        request, source, ledger_uri, ledger.plan_fingerprint, fingerprint, diff
                    )
            if matches and change is not None:
                accepted = PlanChangeRecord(
                    from_fingerprint=change.from_fingerprint,
                    to_fingerprint=change.to_fingerprint,
                    changes=change.changes,
                    accepted_by=change.accepted_by,
                )
        prior = _prior(ledger) if ledger is not None and ledger.run_id == request.run_id else PriorRun()
        loaded = LoadedSpec(
            spec=spec,
            catalog=tools,
            workflow_yaml=_with_vars(text, request.vars),
            ledger_uri=ledger_uri,
            cache_root=cache_root_for(spec, tools, request.run_id, self.context.ledger_base()),
            quota_pool=self.context.quota_pool,
            page_url=self.context.page_url,
            input_source=source,
            plan_fingerprint=fingerprint,
            prior=prior,
            accepted_change=accepted,
        )
        return await self.delivery.deliver(loaded, source)

    async def _spec_text(self, request: LoadSpecInput) -> tuple[str, str]:
        """The spec's text and where it came from ("inline", or the URI it was read from)."""
        if not request.spec_uri:
            return request.spec, "inline"
        try:
            text = await self.context.storage.for_uri(request.spec_uri).read_text(
                request.spec_uri, max_bytes=MAX_SPEC_READ_BYTES
            )
        except ArtifactMissingError:
            issue = SpecIssue(
                file=request.spec_uri,
                message="workflow spec not found",
                hint="check spec_uri; it must be readable by the worker",
            )
            raise SpecError([issue]) from None
        return text, request.spec_uri

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
            old_text = await self.context.storage.for_ledger(uri).read_text(
                uri, max_bytes=MAX_SPEC_READ_BYTES
            )
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


def _refuse_what_would_change_meaning(
    request: LoadSpecInput,
    spec: WorkflowSpec,
    catalog: ToolCatalog,
    tools: ToolCatalog,
    text: str,
    label: str,
) -> None:
    """Refuse, before anything launches, a `vars` key nothing reads and a branch nobody decides.

    The CLI checks both before it starts a run; this holds them for every other
    entry point too (`temporal workflow start`, schedules, the UI's start form).

    Raises:
        SpecError: naming each unknown key (with did-you-mean) or undecided state.
    """
    if request.vars and not request.allow_new_vars:
        issues = unknown_var_issues(request.vars, parse_yaml(text, label), text, tools)
        if issues:
            raise SpecError(issues)
    if not request.assume_decision:
        config = build_run_context(spec, catalog, request.run_id).config
        issues = decision_source_issues(spec, config, text, label)
        if issues:
            raise SpecError(issues)


def _prior(ledger: RuntimeLedger) -> PriorRun:
    """The newest attempt of each wave, as much of it as a later execution needs.

    In-flight attempts travel whole (the run adopts and rewrites them), successes as
    short summaries (what replaying needs), so a run of thousands of waves
    continues-as-new within Temporal's payload limit. Attempts that ended without
    success travel whole but for their poll observations: their task rows name a
    failed batch's members, and a resumed run shows them as its page draws them.
    """
    waves, finished, ended = [], [], []
    for wave in ledger.latest_attempts().values():
        if wave.status is WaveStatus.SUCCEEDED:
            finished.append(FinishedWave.of(wave))
        elif wave.status.is_final():
            ended.append(wave.model_copy(update={"observations": [], "status_errors": []}))
        else:
            waves.append(wave)
    usage = [
        AttemptUsage(key=wave.key, attempt=wave.attempt, parts=parts)
        for wave in ledger.waves
        if (parts := attempt_usage(wave))
    ]
    return PriorRun(
        waves=waves,
        finished=finished,
        ended=ended,
        decisions=ledger.decisions,
        watermarks=ledger.watermarks,
        gpu_hours=ledger.usage.gpu_hours,
        usage=usage,
        quota_waits=[wait for wait in ledger.quota_waits if not wait.is_open()],
    )


def _with_vars(text: str, overrides: dict[str, str]) -> str:
    """The submitted YAML with `--var` overrides merged into config (what actually ran)."""
    if not overrides:
        return text
    document = yaml.safe_load(text) or {}
    document["config"] = {**(document.get("config") or {}), **overrides}
    return yaml.safe_dump(document, sort_keys=False)
