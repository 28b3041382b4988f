"""What a run's load carries: the load's input, the loaded spec, and what earlier executions left.

The workflow's first step (workflows_def/run/spec_load.py) asks `load_spec`
(activities/runs.py) for these; a wide one travels in parts (spec_parts.py).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import WorkflowSpec
from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.runtime.ledger import (
    DecisionRecord,
    FinishedWave,
    PlanChangeRecord,
    Watermark,
    WaveAttemptRecord,
)
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.request import AcceptedPlanChange
from npaflow.waves import WaveKey


class LoadSpecInput(BaseModel):
    """Read (when given a URI), parse and validate the spec of a run."""

    model_config = FROZEN

    run_id: RunId
    spec: str = ""
    spec_uri: str = ""
    vars: dict[str, str] = Field(default_factory=dict)
    allow_new_vars: bool = False
    catalogs: list[str] = Field(default_factory=list)
    assume_decision: str = ""
    accepted_change: AcceptedPlanChange | None = None


class AttemptUsage(BaseModel):
    """One earlier attempt's hours by state: (state, GPU-hours, node-hours, failed)."""

    model_config = FROZEN

    key: WaveKey
    attempt: int
    parts: list[tuple[str, float, float, bool]]


class PriorRun(BaseModel):
    """What an earlier execution of the same run id left in the ledger."""

    model_config = FROZEN

    waves: list[WaveAttemptRecord] = Field(default_factory=list)  # attempts still in flight, whole
    finished: list[FinishedWave] = Field(default_factory=list)  # newest attempts that succeeded
    #: Newest attempts that ended without success, whole but for their poll observations.
    ended: list[WaveAttemptRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    watermarks: dict[str, Watermark] = Field(default_factory=dict)
    gpu_hours: float = 0.0  # every attempt's, as the ledger counts them: what a GPU-hour budget has spent
    #: Every earlier attempt's hours by state, so the run's numbers agree with its ledger's.
    usage: list[AttemptUsage] = Field(default_factory=list)
    quota_waits: list[QuotaWait] = Field(default_factory=list)  # the ended ones: how long it waited

    def latest(self) -> list[WaveAttemptRecord]:
        """The newest attempt of each wave an earlier execution recorded."""
        return [*self.waves, *self.ended, *(wave.record() for wave in self.finished)]


class LoadedSpec(BaseModel):
    """A validated spec plus everything the workflow needs to walk it deterministically."""

    model_config = FROZEN

    spec: WorkflowSpec
    catalog: ToolCatalog
    workflow_yaml: str
    ledger_uri: str
    input_source: str
    cache_root: str = ""  # where stage-cache entries live (npaflow/runtime/locations.py)
    quota_pool: str = ""  # the worker's NPAFLOW_QUOTA_POOL: runs without `quota` join it
    page_url: str = ""  # the worker's NPAFLOW_PAGE_URL: `npaflow ui`, linked from the Temporal UI
    plan_fingerprint: str = ""
    prior: PriorRun = Field(default_factory=PriorRun)
    accepted_change: PlanChangeRecord | None = None  # recorded with the first export
