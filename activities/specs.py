"""`load_spec`: read, parse and validate a run's spec where files and buckets can be read."""

from __future__ import annotations

import yaml
from temporalio import activity

from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.ledger import read_ledger, run_prefix_for
from activities.storage import ArtifactMissingError
from npaflow.catalog import ToolCatalog, load_catalogs
from npaflow.errors import SpecError, SpecIssue
from npaflow.plan import build_plan, plan_fingerprint
from npaflow.runtime.contract import LOAD_SPEC
from npaflow.runtime.messages import LoadedSpec, LoadSpecInput, PriorRun
from npaflow.spec import load_spec_from_str


class SpecActivities:
    """Loads specs for runs started with inline YAML or a `spec_uri`."""

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


def _with_vars(text: str, overrides: dict[str, str]) -> str:
    """The submitted YAML with `--var` overrides merged into config (what actually ran)."""
    if not overrides:
        return text
    document = yaml.safe_load(text) or {}
    document["config"] = {**(document.get("config") or {}), **overrides}
    return yaml.safe_dump(document, sort_keys=False)
