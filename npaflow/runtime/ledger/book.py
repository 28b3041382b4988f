"""What a run has not yet written to its ledger; nothing is forgotten until its export succeeded.

The workflow exports only what changed. A delta is taken as a snapshot (with a
receipt of what it holds) and cleared only when the export activity reports
success: an export that fails leaves everything pending, and a change made while
an export is in flight stays pending for the next one. Re-sending a delta is
harmless: waves are upserted by (key, attempt), decisions are placed at their
offset, watermarks are keyed by state (npaflow/runtime/ledger/document.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from npaflow.fanout.models import FanOutRecord
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.ledger.models import LedgerDelta
from npaflow.runtime.ledger.records import DecisionRecord, Watermark
from npaflow.runtime.notifications import NotificationRecord
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.vocabulary import LedgerStatus
from npaflow.waves import WaveKey

AttemptId = tuple[WaveKey, int]


@dataclass(frozen=True)
class Receipt:
    """What one delta carried: the versions of its records, decisions and run status."""

    waves: tuple[tuple[AttemptId, int], ...]
    watermarks: tuple[tuple[str, int], ...]
    fan_outs: tuple[tuple[str, int], ...]
    notifications: tuple[tuple[str, int], ...]
    quota_waits: tuple[tuple[str, int], ...]
    decisions: int
    status: LedgerStatus
    error: str
    spec: bool


class LedgerBook:
    """Tracks changes not yet exported, by version, so a late success clears only what it carried."""

    def __init__(self) -> None:
        self._version = 0
        self._waves: dict[AttemptId, int] = {}
        self._watermarks: dict[str, int] = {}
        self._fan_outs: dict[str, int] = {}
        self._notifications: dict[str, int] = {}
        self._quota_waits: dict[str, int] = {}
        self._decisions_written = 0
        self._status_written: LedgerStatus | None = None
        self._error_written: str | None = None
        self.spec_pending = False  # the submitted spec goes with the first export
        self.failed_export = ""  # why the last export failed, "" when the ledger is current

    def decisions_carried(self, count: int) -> None:
        """The ledger already holds the run's first `count` decisions (an earlier execution's)."""
        self._decisions_written = max(self._decisions_written, count)

    def wave_changed(self, attempt: AttemptId) -> None:
        """An attempt's record changed."""
        self._version += 1
        self._waves[attempt] = self._version

    def watermark_changed(self, state: str) -> None:
        """A trigger's watermark changed."""
        self._version += 1
        self._watermarks[state] = self._version

    def fan_out_changed(self, key: str) -> None:
        """A fan-out's record changed (its list read, or its members ended)."""
        self._version += 1
        self._fan_outs[key] = self._version

    def notification_changed(self, note: str) -> None:
        """A notification was sent (or its delivery failed)."""
        self._version += 1
        self._notifications[note] = self._version

    def quota_wait_changed(self, wait: str) -> None:
        """A wave began, refreshed or ended its wait for GPUs."""
        self._version += 1
        self._quota_waits[wait] = self._version

    def is_behind(self, *, status: LedgerStatus, error: str, decisions: int) -> bool:
        """True when an export would write something new."""
        return bool(
            self._waves
            or self._watermarks
            or self._fan_outs
            or self._notifications
            or self._quota_waits
            or self.spec_pending
            or decisions > self._decisions_written
            or status != self._status_written
            or error != self._error_written
        )

    def delta(
        self,
        *,
        records: Mapping[AttemptId, WaveAttemptRecord],
        decisions: list[DecisionRecord],
        watermarks: Mapping[str, Watermark],
        fan_outs: Mapping[str, FanOutRecord],
        notifications: Mapping[str, NotificationRecord],
        quota_waits: Mapping[str, QuotaWait],
        status: LedgerStatus,
        error: str,
        cancel_reason: str,
    ) -> tuple[LedgerDelta, Receipt]:
        """Everything pending, and the receipt that clears it once written."""
        delta = LedgerDelta(
            status=status if status != self._status_written else None,
            error=error if error != self._error_written else None,
            waves=[records[attempt] for attempt in self._waves],
            decisions=decisions[self._decisions_written :],
            decision_offset=self._decisions_written,
            watermarks={state: watermarks[state] for state in self._watermarks},
            fan_outs={key: fan_outs[key] for key in self._fan_outs},
            notifications=[notifications[note] for note in self._notifications],
            quota_waits=[quota_waits[wait] for wait in self._quota_waits],
            cancel_reason=cancel_reason,
        )
        receipt = Receipt(
            waves=tuple(self._waves.items()),
            watermarks=tuple(self._watermarks.items()),
            fan_outs=tuple(self._fan_outs.items()),
            notifications=tuple(self._notifications.items()),
            quota_waits=tuple(self._quota_waits.items()),
            decisions=len(decisions),
            status=status,
            error=error,
            spec=self.spec_pending,
        )
        return delta, receipt

    def written(self, receipt: Receipt) -> None:
        """The export of `receipt`'s delta succeeded: forget what it carried (and only that)."""
        for attempt, version in receipt.waves:
            if self._waves.get(attempt) == version:
                del self._waves[attempt]
        for state, version in receipt.watermarks:
            if self._watermarks.get(state) == version:
                del self._watermarks[state]
        for key, version in receipt.fan_outs:
            if self._fan_outs.get(key) == version:
                del self._fan_outs[key]
        for note, version in receipt.notifications:
            if self._notifications.get(note) == version:
                del self._notifications[note]
        for wait, version in receipt.quota_waits:
            if self._quota_waits.get(wait) == version:
                del self._quota_waits[wait]
        self._decisions_written = max(self._decisions_written, receipt.decisions)
        self._status_written, self._error_written = receipt.status, receipt.error
        if receipt.spec:
            self.spec_pending = False
        self.failed_export = ""
