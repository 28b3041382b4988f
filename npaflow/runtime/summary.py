"""What a run reports: its live status (the `status` query) and its final summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from npaflow.fanout.models import FanOutRecord
from npaflow.ids import RunId
from npaflow.presets import FROZEN
from npaflow.printable import printable
from npaflow.runtime.cache.tally import CacheTally
from npaflow.runtime.cache.waits import CacheWait
from npaflow.runtime.ledger import (
    CachedStep,
    DecisionRecord,
    MaybeFailureClass,
    MaybeJobStatus,
    ReconciledJob,
    TaskRow,
    Watermark,
    WaveAttemptRecord,
)
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.request import BackendName
from npaflow.runtime.stalls import Stall
from npaflow.runtime.usage import RunUsage, TaskShape, usage_lines
from npaflow.runtime.vocabulary import RunPhase, StepStatus, WaveStatus
from npaflow.waves import WaveKey, carried_text, items_text, labels_of

if TYPE_CHECKING:
    pass


class WaveView(BaseModel):
    """One wave attempt as the status query shows it."""

    model_config = FROZEN

    key: WaveKey
    attempt: int
    states: list[str]
    items: list[str] = Field(default_factory=list)  # a fan-out batch's members by item (fanout/labels.py)
    job_id: str
    job_name: str
    status: WaveStatus
    sky_status: MaybeJobStatus = None
    error_category: MaybeFailureClass = None
    worker_id: str = ""
    worker_task_queue: str = ""
    started_at: str = ""
    ended_at: str = ""
    gpu_hours: float = 0.0
    node_hours: float = 0.0
    cache: list[CachedStep] = Field(default_factory=list)  # the stage cache's hits and misses
    error: str = ""
    tasks: list[TaskRow] = Field(default_factory=list)  # the job's task rows (the page's timeline)
    task_shapes: list[TaskShape] = Field(default_factory=list)  # while it runs: what its tasks hold
    carried: list[str] = Field(default_factory=list)  # a retried batch's members done before (item keys)

    @classmethod
    def of(cls, record: WaveAttemptRecord) -> WaveView:
        """The view of one attempt's ledger record."""
        return cls(
            key=record.key,
            attempt=record.attempt,
            states=record.states,
            items=record.items,
            job_id=record.job_id,
            job_name=record.job_name,
            status=record.status,
            sky_status=record.sky_status,
            error_category=record.error_category,
            worker_id=record.worker_id,
            worker_task_queue=record.worker_task_queue,
            started_at=record.started_at,
            ended_at=record.ended_at,
            gpu_hours=record.gpu_hours,
            node_hours=record.node_hours,
            cache=record.cache,
            error=record.error,
            tasks=record.tasks,
            task_shapes=record.task_shapes if record.status is WaveStatus.RUNNING else [],
            carried=[member.item for member in record.carried],
        )

    def carried_labels(self) -> list[str]:
        """The items of the members a retry did not launch again: an earlier attempt ran them."""
        return labels_of(self.key, self.items, set(self.carried))


class RunFacts(BaseModel):
    """What the `status` query and `npaflow status` both say of a run, besides its phase and waves."""

    model_config = FROZEN

    pause_requested: bool = False  # `pause` signalled; PAUSED once in-flight waves finish
    backend: BackendName = BackendName.LOCAL
    current_states: list[str] = Field(default_factory=list)
    quota_waits: list[QuotaWait] = Field(default_factory=list)  # each wave's wait, open or ended
    cache_waits: list[CacheWait] = Field(default_factory=list)  # waves waiting for another run's entry
    stalled: list[Stall] = Field(default_factory=list)  # open calls failing and retrying (stalls.py)
    fan_outs: list[FanOutRecord] = Field(default_factory=list)  # the newest, their failures bounded
    decisions: list[DecisionRecord] = Field(default_factory=list)
    ledger_uri: str = ""
    ledger_behind: str = ""  # why the last ledger export failed; "" while the ledger is current
    error: str = ""
    cancel_reason: str = ""
    #: A page of a wide or long run (npaflow/runtime/status_pages.py): the run's wave attempts,
    #: the first one this page lists, and what a budget left out (all of it is in the ledger).
    wave_count: int = 0
    waves_start: int = 0
    decisions_omitted: int = 0
    states_omitted: int = 0  # states whose hours `usage.by_state` leaves out (the cheapest)
    quota_waits_omitted: int = 0
    current_states_omitted: int = 0


class RunStatusView(RunFacts):
    """The live answer to the `status` query."""

    run_id: RunId
    workflow: str
    phase: RunPhase
    waves: list[WaveView] = Field(default_factory=list)
    usage: RunUsage = Field(default_factory=RunUsage)


class StepRecord(BaseModel):
    """One member step of one wave attempt in the final summary (reference §6.9)."""

    model_config = FROZEN

    state: str
    status: StepStatus
    job_id: str = ""
    job_name: str = ""
    sky_status: MaybeJobStatus = None
    wave_key: WaveKey
    group: str = ""
    attempt: int = 1
    error: str = ""

    @classmethod
    def of(cls, record: WaveAttemptRecord, state: str) -> StepRecord:
        """The step of member `state` in one attempt's ledger record."""
        return cls(
            state=state,
            status=record.status.step_status(),
            job_id=record.job_id,
            job_name=record.job_name,
            sky_status=record.sky_status,
            wave_key=record.key,
            group=record.group,
            attempt=record.attempt,
            error=record.error,
        )


#: Quota waits a run's result carries (the newest; the ledger keeps every one).
MAX_SUMMARY_WAITS = 50


class RunSummary(BaseModel):
    """The final summary (reference §6.10 shape plus `failure_class`)."""

    model_config = FROZEN

    workflow: str
    run_id: RunId
    status: RunPhase
    wave_count: int
    waves: list[WaveAttemptRecord] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    watermarks: dict[str, Watermark] = Field(default_factory=dict)
    run_prefix_uri: str = ""
    runtime_state_uri: str = ""
    error: str = ""
    failure_class: MaybeFailureClass = None
    usage: RunUsage = Field(default_factory=RunUsage)
    ledger_behind: str = ""  # why the last ledger export failed ("" when it was written)
    cache: CacheTally = Field(default_factory=CacheTally)  # the stage cache's hits, misses, savings
    quota_waits: list[QuotaWait] = Field(default_factory=list)  # the newest MAX_SUMMARY_WAITS
    fan_outs: list[FanOutRecord] = Field(default_factory=list)  # the newest, their failures bounded
    waves_omitted: int = 0  # older attempts left to the ledger (the result's size is bounded)
    decisions_omitted: int = 0
    states_omitted: int = 0  # states whose hours only the ledger lists (the costliest are here)

    def text_lines(self) -> list[str]:
        """The reference's text form of a summary; decisions name the state that read them."""
        lines = [f"status: {self.status.value}", f"run_id: {self.run_id}", f"waves: {self.wave_count}"]
        if self.waves_omitted:
            lines.append(
                f"({self.waves_omitted} earlier wave attempts are in the ledger: {self.runtime_state_uri})"
            )
        for wave in self.waves:
            hits = [step for step in wave.cache if step.hit]
            job = wave.job_id or (f"cached from {hits[0].source_run}" if hits else "")
            items = items_text(wave.items).strip()  # a fan-out batch: which items its members ran
            carried = labels_of(wave.key, wave.items, {member.item for member in wave.carried})
            lines.append(
                f"{wave.key}: {wave.status.value} [{launched_as(wave)}] states="
                f"{','.join(wave.states)} job_id={job}"
                + (f" items={items}" if items else "")
                + (f" ({carried_text(carried)})" if carried else "")
            )
        if self.cache.text():
            lines.append(f"cache: {self.cache.text()}")
        lines.extend(fan_out.text(run_open=False) for fan_out in self.fan_outs)
        lines.extend(d.line() for d in self.decisions)
        lines.extend(usage_lines(self.usage))
        lines.append(f"run_prefix_uri: {self.run_prefix_uri}")
        if self.ledger_behind:
            lines.append(
                f"ledger: behind the run ({self.ledger_behind}); `npaflow status {self.run_id}` repairs it"
            )
        if self.error:
            lines.append(f"error: {self.error}")
        return [printable(line) for line in lines]  # errors and decisions quote what jobs wrote

    def status_view(self, backend: BackendName) -> RunStatusView:
        """What the status query said as the run ended: its result, read with no worker."""
        return RunStatusView(
            run_id=self.run_id,
            workflow=self.workflow,
            phase=self.status,
            backend=backend,
            waves=[WaveView.of(record) for record in self.waves],
            decisions=self.decisions,
            ledger_uri=self.run_prefix_uri,
            ledger_behind=self.ledger_behind,
            error=self.error,
            usage=self.usage,
            quota_waits=self.quota_waits,
            fan_outs=self.fan_outs,
            wave_count=self.wave_count,
            waves_start=self.waves_omitted,
            decisions_omitted=self.decisions_omitted,
            states_omitted=self.states_omitted,
        )


def launched_as(wave: WaveAttemptRecord) -> str:
    """How a wave was launched and, for a group's batch, what it is: `serial, batch of 1 in sweep`.

    The ledger's kind says only how it was launched: a 1-member batch goes out as a
    serial pipeline (reference §11 note 27), which alone read as if it were no batch.
    """
    if not wave.key.group:
        return wave.kind.value
    return f"{wave.kind.value}, batch of {len(wave.states)} in {wave.key.group}"


class ReportedWave(WaveView):
    """One wave attempt as `status` shows it: the run's view, and whether an orphan sweep ended it."""

    reconciled: bool = False  # its job was cancelled by id after the run ended without its cleanup


class StatusReport(RunFacts):
    """`npaflow status`: the run's own view (the `status` query, else its memo) and what Temporal adds.

    `phase` is a `RunPhase`, or `terminated`/`timed_out` (`RunEnding`) for a run
    that ended without its code; `execution_status` is Temporal's word.
    """

    run_id: RunId
    workflow: str = ""
    phase: str = "unknown"
    waves: list[ReportedWave] = Field(default_factory=list)
    usage: RunUsage | None = None  # None when no worker answered (the memo has no hours)
    execution_status: str = "UNKNOWN"
    worker_version: str = ""
    no_worker: str = ""  # why nothing moves: no worker polls the run's task queue
    unreadable_answer: str = ""  # the run's answer came in a shape this npaflow cannot read
    ledger_repair: str = ""
    reconciled_note: str = ""
    reconciled: list[ReconciledJob] = Field(default_factory=list)

    @classmethod
    def of(cls, view: RunStatusView, execution_status: str) -> StatusReport:
        """The report of the run's own view."""
        fields = view.model_dump()
        fields["waves"] = [ReportedWave(**wave) for wave in fields["waves"]]
        return cls(**fields, execution_status=execution_status)
