"""A run's running totals, kept up to date at every attempt change in O(1).

The UI's current details follow every transition; recomputing them from every
attempt made each transition cost the run's length. These counters change by
what one attempt's change changes.
"""

from __future__ import annotations

from npaflow.runtime.cache.tally import CacheTally
from npaflow.runtime.ledger import UsagePart, WaveAttemptRecord, attempt_usage
from npaflow.runtime.usage import RunUsage, Usage
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey

AttemptId = tuple[WaveKey, int]


class RunProgress:
    """Attempts done, retried and running, and the GPU-/node-hours of all attempts so far."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.retried = 0
        self.running: dict[AttemptId, WaveAttemptRecord] = {}
        self._usage = RunUsage()
        self._parts: dict[AttemptId, list[UsagePart]] = {}
        self._carried = RunUsage()  # what earlier executions spent, as it stood at this one's start
        self.cache = CacheTally()
        self._cache: dict[AttemptId, CacheTally] = {}
        self.latest: dict[str, WaveAttemptRecord] = {}  # each state's newest attempt (costs the states)

    def record(self, attempt: AttemptId, old: WaveAttemptRecord | None, new: WaveAttemptRecord) -> None:
        """Account for one attempt's record changing from `old` (None: new) to `new`."""
        for state in new.states:
            self.latest[state] = new
        if old is None:
            self.total += 1
            self.retried += new.attempt > 1
        else:
            self.done -= old.status is WaveStatus.SUCCEEDED
        self.done += new.status is WaveStatus.SUCCEEDED
        if new.status is WaveStatus.RUNNING:
            self.running[attempt] = new
        else:
            self.running.pop(attempt, None)
        self._add(self._parts.pop(attempt, []), -1)
        parts = attempt_usage(new)
        self._parts[attempt] = parts
        self._add(parts, 1)
        if (earlier := self._cache.pop(attempt, None)) is not None:
            self.cache.add(earlier, -1)
        if new.cache:
            self._cache[attempt] = CacheTally.of(new.cache)
            self.cache.add(self._cache[attempt])

    def carry(self, attempt: AttemptId, parts: list[UsagePart], *, counted: bool = True) -> None:
        """Count an earlier execution's attempt (replaced if this execution records it again).

        `counted`: the earlier execution already added it to the metrics (it ended, and a
        resume started this one); after a continue-as-new it did not, so this one does.
        """
        self._add(self._parts.pop(attempt, []), -1)
        self._parts[attempt] = parts
        self._add(parts, 1)
        if counted:
            self._add(parts, 1, into=self._carried)

    def _add(self, parts: list[UsagePart], sign: int, *, into: RunUsage | None = None) -> None:
        usage = self._usage if into is None else into
        for state, gpu, node, failed in parts:
            usage.add(sign * gpu, sign * node, failed=failed)
            usage.by_state.setdefault(state, Usage()).add(sign * gpu, sign * node, failed=failed)

    def usage(self, now: str = "") -> RunUsage:
        """The totals and each state's share, rounded; with `now`, running attempts count up to it.

        Costs the number of states (and of attempts running, with `now`).
        """
        if not now or not self.running:
            return self._usage.rounded()
        live = self._usage.model_copy(deep=True)
        for attempt, record in self.running.items():
            self._add(self._parts.get(attempt, []), -1, into=live)
            self._add(attempt_usage(record, now), 1, into=live)
        return live.rounded()

    def hours_by_state(self) -> dict[str, Usage]:
        """Each state's hours this execution added (unrounded): counters add each hour once."""
        hours = {}
        for state, usage in self._usage.by_state.items():
            carried = self._carried.by_state.get(state, Usage())
            hours[state] = Usage(
                gpu_hours=usage.gpu_hours - carried.gpu_hours,
                node_hours=usage.node_hours - carried.node_hours,
            )
        return hours

    def state_hours(self) -> dict[str, Usage]:
        """Each state's hours so far, earlier executions included (unrounded; do not change them)."""
        return self._usage.by_state

    def totals(self) -> RunUsage:
        """The run's totals only, rounded (what the UI shows after every transition)."""
        return RunUsage(**Usage.rounded(self._usage).model_dump())
