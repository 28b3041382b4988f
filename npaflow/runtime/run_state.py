"""What a run is and remembers, changed only through the rows of npaflow/runtime/transitions.py.

Every change is a method named after what happened: a phase transition
(`RunTransition`), a wave attempt's stage transition (`WaveTransition`, the
methods of `waves`, npaflow/runtime/wave_attempts.py), or a note (`RunNote`: a request, a reading, an export's
outcome). Each row declares its `Effect`; `take_effect` hands the strongest to
the workflow's recorder, so no call site decides what to export or publish.
Pure and deterministic: timestamps come from the caller, nothing does I/O.
The reports built from it live beside their views (npaflow/runtime/summary.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from npaflow.fanout.models import FanOutRecord
from npaflow.ids import RunId
from npaflow.printable import clipped
from npaflow.runtime.cache.waits import CacheWait
from npaflow.runtime.ledger import DecisionRecord, LedgerDelta, Watermark
from npaflow.runtime.ledger.attempt import unverified_cancels
from npaflow.runtime.ledger.book import LedgerBook, Receipt
from npaflow.runtime.loaded import AttemptUsage
from npaflow.runtime.notifications import NotificationRecord
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.quota_waits import QuotaWait, QuotaWaits
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import FailureClass
from npaflow.runtime.transitions import Effect, RunNote, RunTransition, TransitionError
from npaflow.runtime.vocabulary import RunPhase
from npaflow.runtime.wave_attempts import WaveAttempts

#: Enough for a plan-diff refusal of a few dozen lines; the ledger keeps it, the UI shortens it.
MAX_ERROR_CHARS = 4000
MAX_REASON_CHARS = 1000  # a cancel reason (--reason, a raw signal or cancel): a sentence or two

__all__ = ["MAX_REASON_CHARS", "RunState"]


class RunState:
    """A run's phase, wave attempts, decisions and watermarks, plus what its ledger still lacks."""

    def __init__(self, run_id: RunId) -> None:
        self.run_id = run_id
        self.workflow = ""
        self.ledger_uri = ""
        self.page_url = ""  # `npaflow ui`'s base URL, when the workers name it
        self.backend = BackendName.LOCAL
        self.phase = RunPhase.STARTING
        self.current_states: list[str] = []
        self.quota = QuotaWaits()  # each wave's wait for GPUs: open ones say what the run waits for
        self.cache_waits: dict[str, CacheWait] = {}  # waves waiting for another run's cache entry
        self.error = ""
        self._failure_class: FailureClass | None = None  # the run's own, when it failed for good
        self.cancel_reason = ""
        self.pause_requested = False  # honoured before the next launch
        self.resume_requested = False
        self.decisions: list[DecisionRecord] = []
        self.watermarks: dict[str, Watermark] = {}
        self.fan_outs: dict[str, FanOutRecord] = {}  # by `group#occurrence`
        self.notifications: dict[str, NotificationRecord] = {}
        self.ledger = LedgerBook()
        self.progress = RunProgress()
        self.waves = WaveAttempts(self.progress, self.ledger)
        self._effect = Effect.NONE

    def take_effect(self) -> Effect:
        """The strongest effect the changes since the last call asked for (then NONE)."""
        effect = self._effect | self.waves.effect
        self._effect = self.waves.effect = Effect.NONE
        return effect

    @property
    def failure_class(self) -> FailureClass | None:
        """Why the run failed, else why its newest failed attempt did."""
        return self._failure_class or self.waves.failure_class

    def _note(self, note: RunNote) -> None:
        self._effect |= note.value.effect

    # --- notes: requests, readings, exports ------------------------------------------------

    def pause_requested_by_operator(self) -> None:
        """`pause`: finish in-flight waves, launch no new one."""
        self._note(RunNote.PAUSE_REQUESTED)
        self.pause_requested = True

    def resume_requested_by_operator(self) -> None:
        """`resume`: continue a paused run, or retry a suspended run's failed wave."""
        self._note(RunNote.RESUME_REQUESTED)
        self.pause_requested, self.resume_requested = False, True

    def cancel_requested(self, reason: str) -> None:
        """The `cancel` signal arrived; its reason lands in the ledger."""
        self._note(RunNote.CANCEL_REQUESTED)
        self.cancel_reason = clipped(reason, MAX_REASON_CHARS) or "cancel signal"

    def states_entered(self, states: list[str]) -> None:
        """The walk moved on to these states."""
        self._note(RunNote.STATES_ENTERED)
        self.current_states = list(states)

    def add_decision(self, record: DecisionRecord) -> None:
        """A decision read, or the assumption that stood in for one."""
        self._note(RunNote.DECISION_TAKEN)
        self.decisions.append(record)

    def decisions_carried(self, records: Sequence[DecisionRecord]) -> None:
        """Earlier executions' decisions stay the run's first ones; new ones follow them in the ledger."""
        self._note(RunNote.DECISIONS_CARRIED)
        self.decisions = list(records)
        self.ledger.decisions_carried(len(records))

    def add_watermark(self, state: str, watermark: Watermark) -> None:
        """What a trigger saw when it fired."""
        self._note(RunNote.WATERMARK_SEEN)
        self.watermarks[state] = watermark
        self.ledger.watermark_changed(state)

    def add_fan_out(self, record: FanOutRecord) -> None:
        """A fan-out's list as read (its digest), or how its members ended."""
        self._note(RunNote.FAN_OUT_RECORDED)
        self.fan_outs[record.key] = record
        self.ledger.fan_out_changed(record.key)

    def fan_out_progressed(self, key: str, succeeded: int, failing: int) -> None:
        """A running fan-out's members so far, for status and the page.

        Not a ledger change: the ledger gets the whole record (failures named) at the group's
        end, so no export is added (nor moved) by a batch's count.
        """
        record = self.fan_outs.get(key)
        if record is None or record.ended:
            return
        self._note(RunNote.FAN_OUT_RECORDED)
        self.fan_outs[key] = record.model_copy(update={"succeeded": succeeded, "failing": failing})

    def add_notification(self, record: NotificationRecord) -> None:
        """How a notification's delivery went."""
        self._note(RunNote.NOTIFIED)
        self.notifications[record.id] = record
        self.ledger.notification_changed(record.id)

    def usage_carried(self, prior: list[AttemptUsage], *, counted: bool) -> None:
        """Earlier executions' attempts count in this run's hours, as in its ledger."""
        self._note(RunNote.USAGE_CARRIED)
        for attempt in prior:
            self.progress.carry((attempt.key, attempt.attempt), list(attempt.parts), counted=counted)

    def quota_carried(self, waits: Sequence[QuotaWait]) -> None:
        """Earlier executions' ended waits for GPUs are this run's too (status, `list`'s WAITED)."""
        self._note(RunNote.QUOTA_CARRIED)
        self.quota.carried(waits)

    def run_located(
        self, *, workflow: str, ledger_uri: str, backend: BackendName, page_url: str = ""
    ) -> None:
        """Also for a run cancelled before it started walking: its ledger still gets written."""
        self._note(RunNote.LOCATED)
        self.workflow, self.ledger_uri, self.backend = workflow, ledger_uri, backend
        self.page_url = page_url
        self.ledger.spec_pending = True

    def trigger_waiting(self, state: str) -> None:
        """A trigger's wait begins: the ledger and the UI catch up first."""
        self._note(RunNote.TRIGGER_WAITING)
        self.current_states = [state]

    def quota_waiting(self, wait: QuotaWait) -> None:
        """A wave waits for GPUs: where it stands in its pool's line, for status, the UI and the ledger."""
        self._note(RunNote.QUOTA_WAITING)
        self.ledger.quota_wait_changed(self.quota.waiting(wait).id)

    def quota_settled(self, wave_key: str, *, now: str, granted: bool = False) -> None:
        """The wave no longer waits for GPUs (granted, refused, or it ended): its wait is recorded."""
        ended = self.quota.settled(wave_key, now=now, granted=granted)
        if ended is not None:
            self._note(RunNote.QUOTA_SETTLED)
            self.ledger.quota_wait_changed(ended.id)

    def cache_flight_waiting(self, wait: CacheWait) -> None:
        """A wave waits for the run making the same cache entry: status and the UI name that run."""
        self._note(RunNote.CACHE_WAITING)
        self.cache_waits[wait.wave] = wait

    def cache_flight_boarded(self, wave_key: str) -> None:
        """The wave holds its cache keys now, or stopped waiting for them."""
        if self.cache_waits.pop(wave_key, None) is not None:
            self._note(RunNote.CACHE_BOARDED)

    def launches_held(self) -> None:
        """A pause request reached the launch gate: the ledger catches up before the wait."""
        self._note(RunNote.LAUNCHES_HELD)

    def handing_over(self) -> None:
        """Continue-as-new: the ledger catches up before the history is handed over."""
        self._note(RunNote.HANDING_OVER)

    def ledger_written(self, receipt: Receipt) -> None:
        """An export succeeded: what its receipt carried is no longer pending."""
        self._note(RunNote.EXPORTED)
        self.ledger.written(receipt)

    def ledger_export_failed(self, message: str) -> None:
        """The run says its ledger is behind, and why."""
        self._note(RunNote.EXPORT_FAILED)
        self.ledger.failed_export = message
        self.error = f"{self.error} (the ledger could not be written: {message})"[:MAX_ERROR_CHARS]

    # --- phases ------------------------------------------------------------------------------

    def _to_phase(self, transition: RunTransition) -> None:
        row = transition.value
        if self.phase not in row.sources:
            raise TransitionError(row, f"run {self.run_id}", self.phase)
        self.phase = row.target
        self._effect |= row.effect
        if self.phase.is_final():  # an ended run is in no state: NpaflowState, status and the page agree
            self.current_states = []

    def run_started(
        self, *, workflow: str, ledger_uri: str, backend: BackendName, page_url: str = ""
    ) -> None:
        """The spec is loaded: walking begins; the spec goes with the first export."""
        self._to_phase(RunTransition.STARTED)
        self.run_located(workflow=workflow, ledger_uri=ledger_uri, backend=backend, page_url=page_url)

    def run_paused(self) -> None:
        """A pause request reached the launch gate: nothing new launches."""
        self._to_phase(RunTransition.PAUSED)

    def run_resumed(self) -> None:
        """Paused or suspended no more."""
        self._to_phase(RunTransition.RESUMED)
        self.pause_requested = self.resume_requested = False
        self.error = ""

    def run_suspended(self, error: str) -> None:
        """A wave failed for good under on_failure=suspend: wait for resume or cancel."""
        self._to_phase(RunTransition.SUSPENDED)
        self.error, self.resume_requested = error, False

    def run_cancelling(self, reason: str) -> None:
        """Cancellation began: in-flight jobs are cancelled next."""
        self._to_phase(RunTransition.CANCELLING)
        self.cancel_reason = self.cancel_reason or clipped(reason, MAX_REASON_CHARS) or "no reason given"
        self.error = f"run cancelled: {self.cancel_reason}"

    def run_cancelled(self) -> None:
        """Every in-flight job was cancelled (a cancel not seen to end its job: named in the error)."""
        self._to_phase(RunTransition.CANCELLED)
        self.error = self._with_unverified(self.error)

    def run_succeeded(self) -> None:
        """The walk reached its end."""
        self._to_phase(RunTransition.SUCCEEDED)

    def run_failed(self, error: str, failure_class: FailureClass | None = None) -> None:
        """Without a class, the class of the run's last failed attempt."""
        self._to_phase(RunTransition.FAILED)
        lines = (" ".join(line.split()) for line in error.splitlines())
        self.error = self._with_unverified("\n".join(line for line in lines if line))
        self._failure_class = failure_class or self.failure_class

    def _with_unverified(self, error: str) -> str:
        """The run's error, then the jobs its cleanup cancelled without seeing them end."""
        note = unverified_cancels(self.waves.unverified)
        return f"{error[: MAX_ERROR_CHARS - len(note) - 2]}; {note}" if note else error[:MAX_ERROR_CHARS]

    # --- the ledger delta ----------------------------------------------------------------------

    def ledger_is_behind(self) -> bool:
        """True when an export would write something the ledger does not have."""
        status = self.phase.ledger_status()
        return self.ledger.is_behind(status=status, error=self.error, decisions=len(self.decisions))

    def pending_delta(self) -> tuple[LedgerDelta, Receipt]:
        """What the ledger lacks, with the receipt `ledger_written` takes once it is exported."""
        return self.ledger.delta(
            records=self.waves.by_id(),
            decisions=self.decisions,
            watermarks=self.watermarks,
            fan_outs=self.fan_outs,
            notifications=self.notifications,
            quota_waits=self.quota.by_id,
            status=self.phase.ledger_status(),
            error=self.error,
            cancel_reason=self.cancel_reason,
        )
