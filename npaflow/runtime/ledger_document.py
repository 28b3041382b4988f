"""A run's ledger held in memory: deltas merge in time proportional to the delta.

`runtime.json`, `manifest.json` and `status.json` are rewritten after every wave
transition. Re-serializing every wave each time made a run's cost grow with its
length; here each wave attempt, stage and manifest step is serialized once when
it changes, and a file is the concatenation of those fragments. The text is
byte-for-byte what `json.dumps(document, indent=2, sort_keys=True)` would write
(tests/unit/test_ledger_document.py pins it).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from npaflow.runtime.ledger import (
    LedgerDelta,
    PlanChangeRecord,
    RuntimeLedger,
    StageRecord,
    UsagePart,
    WaveAttemptRecord,
    attempt_usage,
    total_usage,
)
from npaflow.runtime.projection import (
    InputSource,
    ManifestDocument,
    StatusDocument,
    manifest_steps,
    stage_records,
)
from npaflow.waves import WaveKey

AttemptKey = tuple[WaveKey, int]
#: Arrays of the documents kept as fragments; everything else is small and dumped whole.
_ARRAYS = ("waves", "stages", "decisions")


def dump_json(value: Any) -> str:
    """The ledger's JSON style: indent 2, sorted keys (reference §6.6)."""
    return json.dumps(value, indent=2, sort_keys=True)


def dump_model(model: BaseModel) -> str:
    """One model as ledger JSON (field aliases: declared outputs read `{uri, schema}`)."""
    return dump_json(model.model_dump(mode="json", by_alias=True))


def compose(top: dict[str, Any], arrays: dict[str, list[str]]) -> str:
    """A top-level object whose list fields are given as serialized items, as one JSON text."""
    marks = {name: f"\x00{name}\x00" for name in arrays}
    text = dump_json({**top, **marks})
    for name, items in arrays.items():
        body = "[\n" + ",\n".join(_indent(item) for item in items) + "\n  ]" if items else "[]"
        text = text.replace(json.dumps(marks[name]), body, 1)
    return text + "\n"


def _indent(fragment: str) -> str:
    return "\n".join("    " + line for line in fragment.split("\n"))


class LedgerDocument:
    """The stored ledger plus serialized fragments of its waves, stages and manifest steps."""

    def __init__(self, ledger: RuntimeLedger, input_source: InputSource | None = None) -> None:
        self.ledger = ledger
        self.input_source = input_source or InputSource()
        self._waves: dict[AttemptKey, int] = {}
        self._wave_text: list[str] = []
        self._stages: dict[tuple[str, int], int] = {}
        self._stage_text: list[str] = []
        self._latest: dict[WaveKey, int] = {}  # key -> index of its newest attempt in waves
        self._step_text: dict[WaveKey, list[str]] = {}
        self._step_count: dict[WaveKey, int] = {}
        self._usage: dict[AttemptKey, list[UsagePart]] = {}
        self._decision_text = [dump_model(d) for d in ledger.decisions]
        waves, ledger.waves, ledger.stages = list(ledger.waves), [], []
        for wave in waves:
            self._upsert_wave(wave)
        ledger.usage = total_usage(self._usage.values())

    def apply(self, delta: LedgerDelta, *, run_prefix_uri: str, now: str) -> None:
        """Merge a delta: waves upserted by (key, attempt), decisions placed at their offset.

        Applying the same delta twice (an export retried after a lost answer) changes nothing.
        """
        ledger = self.ledger
        ledger.run_prefix_uri = run_prefix_uri
        for wave in delta.waves:
            self._upsert_wave(wave)
        if delta.waves:
            ledger.usage = total_usage(self._usage.values())
        self._place_decisions(delta)
        ledger.watermarks.update(delta.watermarks)
        if delta.status is not None:
            ledger.status = delta.status
        if delta.error is not None:
            ledger.error = delta.error
        if delta.plan_fingerprint:
            ledger.plan_fingerprint = delta.plan_fingerprint
        if delta.cancel_reason:
            ledger.cancel_reason = delta.cancel_reason
        if delta.plan_change is not None:
            self._add_plan_change(delta.plan_change, now)
        ledger.updated_at = now

    def _place_decisions(self, delta: LedgerDelta) -> None:
        decisions = self.ledger.decisions
        start = (
            len(decisions) if delta.decision_offset is None else min(delta.decision_offset, len(decisions))
        )
        end = start + len(delta.decisions)
        decisions[start:end] = delta.decisions
        self._decision_text[start:end] = [dump_model(d) for d in delta.decisions]

    def _add_plan_change(self, change: PlanChangeRecord, now: str) -> None:
        recorded = self.ledger.plan_changes
        identity = (change.from_fingerprint, change.to_fingerprint)
        if recorded and (recorded[-1].from_fingerprint, recorded[-1].to_fingerprint) == identity:
            return
        recorded.append(change.model_copy(update={"accepted_at": now}))

    def _upsert_wave(self, wave: WaveAttemptRecord) -> None:
        identity = (wave.key, wave.attempt)
        position = self._waves.get(identity)
        if position is None:
            position = self._waves[identity] = len(self.ledger.waves)
            self.ledger.waves.append(wave)
            self._wave_text.append("")
        self.ledger.waves[position] = wave
        self._wave_text[position] = dump_model(wave)
        self._usage[identity] = attempt_usage(wave)
        for stage in stage_records(wave):
            self._upsert_stage(stage)
        newest = self._latest.get(wave.key)
        if newest is None or wave.attempt >= self.ledger.waves[newest].attempt:
            self._latest[wave.key] = position
            steps = manifest_steps(wave)
            self._step_text[wave.key] = [dump_model(step) for step in steps]
            self._step_count[wave.key] = len(steps)

    def _upsert_stage(self, stage: StageRecord) -> None:
        identity = (stage.key, stage.attempt)
        position = self._stages.get(identity)
        stages = self.ledger.stages
        if position is None:
            position = self._stages[identity] = len(stages)
            stages.append(stage)
            self._stage_text.append("")
        elif not stage.last_heartbeat_at and stages[position].last_heartbeat_at:
            earlier = stages[position]  # keep the last real heartbeat (reference stage projection)
            stage = stage.model_copy(
                update={
                    "last_heartbeat_at": earlier.last_heartbeat_at,
                    "heartbeat_source": earlier.heartbeat_source,
                }
            )
        stages[position] = stage
        self._stage_text[position] = dump_model(stage)

    def manifest_status(self) -> str:
        """The manifest's status word for the run's ledger status."""
        return self.ledger.status.manifest_status()

    def runtime_text(self) -> str:
        """`runtime.json`."""
        top = self.ledger.model_dump(mode="json", by_alias=True, exclude=set(_ARRAYS))
        return compose(
            top, {"waves": self._wave_text, "stages": self._stage_text, "decisions": self._decision_text}
        )

    def manifest_text(self) -> str:
        """`manifest.json`: the newest attempt's steps of every wave, in first-seen order."""
        ledger = self.ledger
        manifest = ManifestDocument(
            workflow=ledger.workflow,
            run_id=ledger.run_id,
            api_version=ledger.api_version,
            run_prefix_uri=ledger.run_prefix_uri,
            status=self.manifest_status(),
            updated_at=ledger.updated_at,
            input_source=self.input_source,
        )
        top = manifest.model_dump(mode="json", by_alias=True, exclude={"steps"})
        return compose(top, {"steps": [text for key in self._latest for text in self._step_text[key]]})

    def status_text(self) -> str:
        """`status.json`: the manifest's status, step count and usage."""
        ledger = self.ledger
        document = StatusDocument(
            run_id=ledger.run_id,
            workflow=ledger.workflow,
            status=self.manifest_status(),
            updated_at=ledger.updated_at,
            step_count=sum(self._step_count.values()),
            usage=ledger.usage,
        )
        return dump_model(document) + "\n"
