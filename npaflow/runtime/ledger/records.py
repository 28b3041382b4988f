"""The ledger's small records: decisions read, trigger watermarks, launch receipts, accepted plan changes.

Re-exported by npaflow/runtime/ledger/models.py, where the documents that hold them live.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, JsonValue

from npaflow.decisions import shown_decision, unknown_decision_note
from npaflow.document.models import Artifact
from npaflow.presets import STRICT
from npaflow.printable import printable
from npaflow.runtime.vocabulary import DecisionSource


def _blank_is_artifact(value: Any) -> Any:
    """Decision records written before the source was recorded were artifact reads."""
    return DecisionSource.ARTIFACT if value == "" else value


class DecisionRecord(BaseModel):
    """One decision read: where from, what it said, and how it was obtained."""

    model_config = STRICT

    state: str = ""
    uri: str
    decision: str = ""
    read_at: str = ""
    source: Annotated[DecisionSource, BeforeValidator(_blank_is_artifact)] = DecisionSource.ARTIFACT
    body: str = ""
    decode_error: str = ""

    @property
    def shown(self) -> str:
        """The decision as people read it (`loop_back`), "(none)" when it said nothing, controls escaped."""
        return printable(shown_decision(self.decision)) or "(none)"

    def line(self) -> str:
        """`decision: D <- URI (state S)`, with a note when no predicate can match D."""
        state = f" (state {self.state})" if self.state else ""
        note = unknown_decision_note(self.decision)
        return f"decision: {self.shown} <- {self.uri}{state}" + (f" [{printable(note)}]" if note else "")


class Watermark(BaseModel):
    """What a trigger saw when it fired."""

    model_config = STRICT

    uri: str
    objects: int
    polls: int
    observed_at: str
    sample: list[str] = Field(default_factory=list)


class LaunchReceipt(BaseModel):
    """`npa-workflow/launches/<job name>.json`: written once a launch is accepted, before it is awaited."""

    model_config = STRICT

    job_name: str
    launch_token: str
    request_id: str
    worker_id: str = ""
    submitted_at: str = ""
    #: The attempt it launched: a run closed before its ledger named the job is rebuilt from these.
    wave_key: str = ""
    attempt: int = 1


class PlanChangeRecord(BaseModel):
    """A restart onto an edited spec whose change the operator accepted (ours, additive)."""

    model_config = STRICT

    accepted_at: str = ""
    accepted_by: str = ""
    from_fingerprint: str
    to_fingerprint: str
    changes: list[str] = Field(default_factory=list)


class CachedStep(BaseModel):
    """A cached step of a wave attempt: its key, and whether a verified entry stood in for its job.

    A hit names the producing run and job and the GPU-hours it did not spend; a miss
    says why (no entry, expired, an object changed) and whether this attempt's
    success was stored for later runs.
    """

    model_config = STRICT

    state: str
    key: str
    item: str = ""  # a fan-out member's item key (its state is its template's)
    entry: str = ""  # where its entry is (or would be) stored
    hit: bool = False
    source_run: str = ""
    source_job: str = ""
    gpu_hours_saved: float = 0.0
    reason: str = ""
    stored: bool = False


class CarriedMember(BaseModel):
    """A member of a retried fan-out batch that an earlier attempt ran to success: not launched again."""

    model_config = STRICT

    item: str  # its item key
    attempt: int  # the attempt whose job ran it
    job_id: str = ""
    job_name: str = ""


class PlannedStep(BaseModel):
    """One member of a wave as the plan made it: what `manifest.json` steps carry (reference §6.9)."""

    model_config = STRICT

    state: str
    iteration: int | None = None
    tool_ref: str = ""
    resources: str = "default"
    resources_profile: dict[str, JsonValue] = Field(default_factory=dict)
    inputs: list[Artifact] = Field(default_factory=list)
    outputs: list[Artifact] = Field(default_factory=list)
    image: str = ""  # ours: the image as chosen (usually a tag); "" = SkyPilot's default
    image_digest: str = ""  # ours: the digest it launched as ("" = not pinned: the tag as it was then)
