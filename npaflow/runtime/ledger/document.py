"""A run's ledger held in memory: deltas merge in time proportional to the delta.

`runtime.json`, `manifest.json` and `status.json` are rewritten after every wave
transition. Re-serializing every wave each time made a run's cost grow with its
length; here each wave attempt, stage, manifest step and per-state usage entry is
rendered once when it changes (npaflow/runtime/json_text.py), and a file is the
join of those pieces: byte-for-byte what `json.dumps(document, indent=2,
sort_keys=True)` would write (tests/unit/test_ledger_document.py pins it).
"""

from __future__ import annotations

import json
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from npaflow.runtime.json_text import STEP as _STEP
from npaflow.runtime.json_text import Raw, document_text, item, list_raw, object_raw
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.ledger.models import LedgerDelta, RuntimeLedger, StageRecord
from npaflow.runtime.ledger.projection import (
    InputSource,
    ManifestDocument,
    StatusDocument,
    manifest_steps,
    stage_records,
)
from npaflow.runtime.ledger.records import PlanChangeRecord
from npaflow.runtime.ledger.spend import UsagePart, attempt_usage
from npaflow.runtime.usage import RunUsage, Usage
from npaflow.runtime.vocabulary import LedgerStatus
from npaflow.waves import WaveKey

AttemptKey = tuple[WaveKey, int]


def dump_json(value: Any) -> str:
    """The ledger's JSON style: indent 2, sorted keys (reference §6.6)."""
    return json.dumps(value, indent=2, sort_keys=True)


def as_json(model: BaseModel) -> Any:
    """A model as the ledger writes it (field aliases: declared outputs read `{uri, schema}`)."""
    return model.model_dump(mode="json", by_alias=True)


class UsageBook:
    """GPU- and node-hours per state and in all, kept as running sums with rendered entries."""

    def __init__(self) -> None:
        self.totals = Usage()
        self.states: dict[str, Usage] = {}
        self._counts: dict[str, int] = {}
        self._parts: dict[AttemptKey, list[UsagePart]] = {}
        self._entries: dict[str, str] = {}  # each state's `"name": {...}` line, rendered for depth 3
        self._by_state: Raw | None = None  # the joined entries, until a state's usage changes
        self._raw: Raw | None = None  # the whole object, until any usage changes

    def record(self, attempt: AttemptKey, parts: list[UsagePart]) -> None:
        """An attempt's share changed: take its old parts out, put the new ones in."""
        for part in self._parts.pop(attempt, []):
            self._add(part, -1)
        for part in parts:
            self._add(part, 1)
        self._parts[attempt] = parts

    def _add(self, part: UsagePart, sign: int) -> None:
        state, gpu, node, failed = part
        self.totals.add(sign * gpu, sign * node, failed=failed)
        self.states.setdefault(state, Usage()).add(sign * gpu, sign * node, failed=failed)
        self._counts[state] = self._counts.get(state, 0) + sign
        self._entries.pop(state, None)
        self._by_state = self._raw = None
        if not self._counts[state]:
            del self._counts[state], self.states[state]

    def model(self) -> RunUsage:
        """The rounded usage as a model (what `usage` in the ledger holds)."""
        return RunUsage(
            **as_json(self.totals.rounded()), by_state={k: v.rounded() for k, v in self.states.items()}
        )

    def raw(self) -> Raw:
        """The rounded usage object as it sits at depth 1 (only changed states are rendered again)."""
        if self._raw is not None:
            return self._raw
        if self._by_state is None:
            for state in self.states:
                if state not in self._entries:
                    value = item(as_json(self.states[state].rounded()), 3).lstrip()
                    self._entries[state] = f"{_STEP * 3}{json.dumps(state)}: {value}"
            lines = [self._entries[state] for state in sorted(self.states)]
            self._by_state = list_raw(lines, 2, opening="{", closing="}")
        self._raw = object_raw({**as_json(self.totals.rounded()), "by_state": self._by_state}, 1)
        return self._raw


class LedgerDocument:
    """The stored ledger plus rendered pieces of its waves, stages, decisions and manifest steps."""

    def __init__(self, ledger: RuntimeLedger, input_source: InputSource | None = None) -> None:
        self._ledger = ledger
        self.input_source = input_source or InputSource()
        self._waves: dict[AttemptKey, int] = {}
        self._wave_text: list[str] = []
        self._stages: dict[tuple[str, int], int] = {}
        self._stage_text: list[str] = []
        self._latest: dict[WaveKey, int] = {}  # key -> index of its newest attempt in waves
        self._step_text: dict[WaveKey, list[str]] = {}
        self._step_count = 0  # sum of len(self._step_text[key]) for the newest attempts
        self._usage = UsageBook()
        self._decision_text = [item(as_json(d), 2) for d in ledger.decisions]
        waves, ledger.waves, ledger.stages = list(ledger.waves), [], []
        for wave in waves:
            self._upsert_wave(wave)

    @property
    def ledger(self) -> RuntimeLedger:
        """The ledger model, its usage brought up to date (costs the states: not for every export)."""
        self._ledger.usage = self._usage.model()
        return self._ledger

    @property
    def status(self) -> LedgerStatus:
        """The run's status as the ledger records it."""
        return self._ledger.status

    def apply(self, delta: LedgerDelta, *, run_prefix_uri: str, now: str) -> None:
        """Merge a delta: waves upserted by (key, attempt), decisions placed at their offset.

        Applying the same delta twice (an export retried after a lost answer) changes nothing.
        """
        ledger = self._ledger
        ledger.run_prefix_uri = run_prefix_uri
        for wave in delta.waves:
            self._upsert_wave(wave)
        self._place_decisions(delta)
        ledger.watermarks.update(delta.watermarks)
        ledger.fan_outs.update(delta.fan_outs)
        if delta.status is not None:
            ledger.status = delta.status
        if delta.error is not None:
            ledger.error = delta.error
        if delta.plan_fingerprint:
            ledger.plan_fingerprint = delta.plan_fingerprint
        if delta.cancel_reason:
            ledger.cancel_reason = delta.cancel_reason
        if delta.images is not None:
            ledger.images = delta.images
        if delta.plan_change is not None:
            self._add_plan_change(delta.plan_change, now)
        ledger.quota_waits = _upserted(ledger.quota_waits, delta.quota_waits)
        ledger.notifications = _upserted(ledger.notifications, delta.notifications)
        for job in delta.reconciled:
            ledger.reconciled = [j for j in ledger.reconciled if j.job_id != job.job_id] + [job]
        ledger.updated_at = now

    def _place_decisions(self, delta: LedgerDelta) -> None:
        decisions = self._ledger.decisions
        offset = delta.decision_offset
        start = len(decisions) if offset is None else min(offset, len(decisions))
        end = start + len(delta.decisions)
        decisions[start:end] = delta.decisions
        self._decision_text[start:end] = [item(as_json(d), 2) for d in delta.decisions]

    def _add_plan_change(self, change: PlanChangeRecord, now: str) -> None:
        recorded = self._ledger.plan_changes
        identity = (change.from_fingerprint, change.to_fingerprint)
        if recorded and (recorded[-1].from_fingerprint, recorded[-1].to_fingerprint) == identity:
            return
        recorded.append(change.model_copy(update={"accepted_at": now}))

    def _upsert_wave(self, wave: WaveAttemptRecord) -> None:
        identity, waves = (wave.key, wave.attempt), self._ledger.waves
        position = self._waves.get(identity)
        if position is None:
            position = self._waves[identity] = len(waves)
            waves.append(wave)
            self._wave_text.append("")
        waves[position] = wave
        self._wave_text[position] = item(as_json(wave), 2)
        self._usage.record(identity, attempt_usage(wave))
        for stage in stage_records(wave):
            self._upsert_stage(stage)
        newest = self._latest.get(wave.key)
        if newest is None or wave.attempt >= waves[newest].attempt:
            self._latest[wave.key] = position
            steps = [item(as_json(step), 2) for step in manifest_steps(wave)]
            self._step_count += len(steps) - len(self._step_text.get(wave.key, ()))
            self._step_text[wave.key] = steps

    def _upsert_stage(self, stage: StageRecord) -> None:
        identity, stages = (stage.key, stage.attempt), self._ledger.stages
        position = self._stages.get(identity)
        if position is None:
            position = self._stages[identity] = len(stages)
            stages.append(stage)
            self._stage_text.append("")
        elif not stage.last_heartbeat_at and stages[position].last_heartbeat_at:
            earlier = stages[position]  # keep the last real heartbeat (reference stage projection)
            kept = {
                "last_heartbeat_at": earlier.last_heartbeat_at,
                "heartbeat_source": earlier.heartbeat_source,
            }
            stage = stage.model_copy(update=kept)
        stages[position] = stage
        self._stage_text[position] = item(as_json(stage), 2)

    def manifest_status(self) -> str:
        """The manifest's status word for the run's ledger status."""
        return self._ledger.status.manifest_status()

    def runtime_text(self) -> str:
        """`runtime.json`."""
        ledger = self._ledger
        top = ledger.model_dump(mode="json", by_alias=True, exclude={"waves", "stages", "decisions", "usage"})
        pieces = {
            "waves": list_raw(self._wave_text, 1),
            "stages": list_raw(self._stage_text, 1),
            "decisions": list_raw(self._decision_text, 1),
            "usage": self._usage.raw(),
        }
        return document_text({**top, **pieces})

    def manifest_text(self) -> str:
        """`manifest.json`: the newest attempt's steps of every wave, in first-seen order."""
        ledger = self._ledger
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
        steps = [text for texts in self._step_text.values() for text in texts]  # first-seen order
        return document_text({**top, "steps": list_raw(steps, 1)})

    def status_text(self) -> str:
        """`status.json`: the manifest's status, step count and usage."""
        ledger = self._ledger
        document = StatusDocument(
            run_id=ledger.run_id,
            workflow=ledger.workflow,
            status=self.manifest_status(),
            updated_at=ledger.updated_at,
            step_count=self._step_count,
        )
        top = document.model_dump(mode="json", by_alias=True, exclude={"usage"})
        return document_text({**top, "usage": self._usage.raw()})


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


Record = TypeVar("Record", bound=_Identified)


def _upserted(stored: list[Record], changed: list[Record]) -> list[Record]:
    """`stored` with each changed record replacing the one of its id, or appended in order."""
    merged = {record.id: record for record in stored}
    merged.update((record.id, record) for record in changed)
    return list(merged.values())
