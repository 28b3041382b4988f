"""The workflow input: one flat `RunRequest`, short enough to write by hand as --input JSON."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from npaflow.decisions import assumption_problem
from npaflow.ids import RunId
from npaflow.images import ImageBinding
from npaflow.presets import FROZEN
from npaflow.quota import QuotaClaim
from npaflow.runtime.cache.messages import CacheMode
from npaflow.runtime.notifications import NotifyWhen

#: The largest GPU-hour budget a run may name.
MAX_GPU_HOURS = 10_000_000
#: A run id (it becomes the workflow id, job names and ledger prefixes); a scheduled run's id
#: ends in the time Temporal's schedule adds (`-2026-12-01T03:00:00Z`).
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(?:-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)?\Z")
#: Longest retry backoff, so exponential growth cannot park a run for hours.
MAX_RETRY_BACKOFF_SECONDS = 1800
#: Longest duration any field may name (30 days): every duration becomes a Temporal timer
#: or timeout, and `timedelta` overflows long before "forever" (0 means unbounded where allowed).
MAX_DURATION_SECONDS = 30 * 24 * 3600
#: Shortest poll interval: below it a wait is a busy loop, not a poll.
MIN_POLL_SECONDS = 0.05
#: Most attempts, recoveries and group width a request may ask for.
MAX_RETRIES = 1000
MAX_CONCURRENCY = 100_000
#: Where a worker can read a spec from: an S3 object, or a file it may read.
SPEC_URI_PATTERN = re.compile(r"^(?:s3://[^/\s]+/\S+|file:///\S*|/\S*)\Z")


def run_id_problem(run_id: str) -> str:
    """Why `run_id` cannot be a run's id ("" when it can): it becomes the workflow id and paths."""
    if RUN_ID_PATTERN.fullmatch(run_id):
        return ""
    return (
        f"run id {run_id[:120]!r}: 1-96 letters, digits, '.', '_' or '-', starting with a "
        "letter or digit (it becomes the workflow id, job names and ledger paths)"
    )


class BackendName(StrEnum):
    """Where wave jobs run."""

    LOCAL = "local"  # processes on the worker's machine (the embedded default)
    SKYPILOT = "skypilot"  # SkyPilot managed jobs through its Python SDK and an API server


class OnFailure(StrEnum):
    """What a run does when a wave fails for good."""

    FAIL = "fail"  # the run fails (the ledger keeps everything; resume re-runs it)
    SUSPEND = "suspend"  # the run parks until `resume` retries the wave or `cancel` ends it


class AcceptedPlanChange(BaseModel):
    """A plan change the operator accepted on restart (`npaflow resume --spec --accept-changes`)."""

    model_config = FROZEN

    from_fingerprint: str
    to_fingerprint: str
    changes: list[str] = Field(default_factory=list)  # PlanDiff.text_lines()
    accepted_by: str = ""


class RunRequest(BaseModel):
    """Everything needed to start (or restart) one run of a spec."""

    model_config = FROZEN | ConfigDict(allow_inf_nan=False)

    spec: str = ""
    spec_uri: str = ""
    run_id: RunId = RunId("")
    vars: dict[str, str] = Field(default_factory=dict)
    allow_new_vars: bool = False  # a `vars` key nothing in the spec reads is refused unless set
    catalogs: list[str] = Field(default_factory=list)
    poll_seconds: float = Field(default=30, ge=MIN_POLL_SECONDS, le=MAX_DURATION_SECONDS)
    max_wait_seconds: float = Field(default=3600, ge=0, le=MAX_DURATION_SECONDS)  # 0 = unbounded
    retries: int = Field(default=0, ge=0, le=MAX_RETRIES)
    retry_backoff_seconds: float = Field(default=30, ge=0, le=MAX_DURATION_SECONDS)
    max_infrastructure_recoveries: int = Field(default=1, ge=0, le=MAX_RETRIES)
    #: 0 = wait for capacity forever
    pending_timeout_seconds: float = Field(default=1800, ge=0, le=MAX_DURATION_SECONDS)
    transport_recovery_seconds: float = Field(default=600, ge=0, le=MAX_DURATION_SECONDS)
    worker_lost_seconds: float = Field(default=900, gt=0, le=MAX_DURATION_SECONDS)
    max_concurrency: int = Field(default=0, ge=0, le=MAX_CONCURRENCY)
    cancel_on_timeout: bool = True
    assume_decision: str = ""
    on_failure: OnFailure = OnFailure.FAIL
    notify: NotifyWhen = NotifyWhen.FAILURES  # which outcomes go to the workers' webhooks
    max_gpu_hours: float = Field(default=0, ge=0, le=MAX_GPU_HOURS)  # 0 = no budget
    secret_env: list[str] = Field(default_factory=list)
    backend: BackendName = BackendName.LOCAL
    infra: str = ""
    cache: CacheMode = CacheMode.ON  # the stage cache: on, refresh (run and overwrite), off
    cache_scope: str = Field(default="", max_length=200)  # "" = the spec's metadata.name
    quota: QuotaClaim | None = None  # the GPU quota pool each wave acquires its GPUs from
    #: Image overrides and the digests preflight verified: every launch of the run uses exactly these.
    images: ImageBinding = Field(default_factory=ImageBinding)
    reread_items: bool = False  # `resume --reread-items`: fan-outs read their lists' sources again
    continued: bool = False  # set by continue-as-new: the ledger's completed waves are trusted
    #: Set by continue-as-new: the sequence of the wave the run handed over before. The waves
    #: before it ended in an earlier execution of this chain; one that ended without success
    #: (a fan-out batch within `minSuccess`) stays so. 0: none known (what a resume starts with).
    handed_over_at: int = Field(default=0, ge=0)
    accepted_change: AcceptedPlanChange | None = None  # a restart onto an edited spec

    @field_validator("spec_uri")
    @classmethod
    def _readable_spec_uri(cls, value: str) -> str:
        if value and not SPEC_URI_PATTERN.fullmatch(value):
            raise ValueError(
                f"{value[:200]!r} is not where a worker reads a spec: give s3://BUCKET/KEY, "
                "file:///ABSOLUTE/PATH or an absolute path (or the YAML itself as 'spec')"
            )
        return value

    @model_validator(mode="after")
    def _one_spec_source(self) -> RunRequest:
        if bool(self.spec) == bool(self.spec_uri):
            raise ValueError("give exactly one of 'spec' (inline YAML) or 'spec_uri'")
        if self.handed_over_at and not self.continued:
            raise ValueError("'handed_over_at' is set by continue-as-new only (with 'continued')")
        if self.run_id and (problem := run_id_problem(self.run_id)):
            raise ValueError(problem)
        if problem := assumption_problem(self.assume_decision):
            raise ValueError(problem)
        for name in self.secret_env:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\Z", name):
                raise ValueError(f"secret_env entries are variable names, got {name!r}")
        return self

    def backoff_seconds(self, failed_attempts: int) -> float:
        """Exponential backoff (x2 per failed attempt), capped."""
        delay = self.retry_backoff_seconds * (2 ** max(0, failed_attempts - 1))
        return float(min(delay, MAX_RETRY_BACKOFF_SECONDS))
