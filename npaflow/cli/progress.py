"""Live progress of a run for `submit --wait` and `status --watch`.

On a terminal the view is redrawn in place (rich); otherwise one plain line is
printed per change, so logs and CI output stay readable. The view comes from
the run's `status` query, polled about once a second.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any

from npaflow.cli.wait_lines import new_waits, waiting_lines
from npaflow.printable import printable
from npaflow.runtime.cache.tally import served_words
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import RunStatusView, WaveView
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.runtime.usage import gpu_hours_text
from npaflow.runtime.vocabulary import RunPhase, WaveStatus
from npaflow.waves import carried_text, wave_text


def elapsed(started_at: str, now: float | None = None) -> str:
    """`1h02m`, `3m05s` or `12s` since an ISO timestamp ("-" when unknown)."""
    start = epoch_seconds(started_at)
    if start is None:
        return "-"
    seconds = max(0, int((now if now is not None else time.time()) - start))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _states(wave: WaveView) -> str:
    return wave_text(wave.states, wave.items)


def progress_lines(view: RunStatusView, now: float | None = None) -> list[str]:
    """The progress view as text lines: phase, waves, running states, retries, decision, GPU-h, ledger."""
    done = sum(1 for w in view.waves if w.status is WaveStatus.SUCCEEDED)
    retries = sum(1 for w in view.waves if w.attempt > 1)
    lines = [
        f"run {view.run_id} ({view.workflow or '-'}): {_phase(view)}",
        f"waves: {done} done of {len(view.waves)} known so far" + (f", {retries} retried" if retries else ""),
    ]
    for wave in view.waves:
        if wave.status is WaveStatus.RUNNING:
            where = f" on worker {wave.worker_id}" if wave.worker_id else ""
            said = _wave_status(wave).removeprefix("running")
            lines.append(
                f"  running {_states(wave)} attempt {wave.attempt}: job "
                f"{wave.job_id or '(launching)'}{where} for {elapsed(wave.started_at, now)}{said}"
            )
    lines.extend(f"  waiting: {line}" for line in waiting_lines(view))
    for wave in view.waves:
        if wave.status is WaveStatus.FAILED:
            category = f" [{wave.error_category.value}]" if wave.error_category else ""
            lines.append(f"  failed {_states(wave)} attempt {wave.attempt}{category}")
    if view.decisions:
        last = view.decisions[-1]
        lines.append(f"last decision: {last.shown} from state {last.state or '-'} <- {last.uri}")
    if view.usage.node_hours:
        lines.append(
            f"used so far: {gpu_hours_text(view.usage.gpu_hours)} GPU-h, "
            f"{gpu_hours_text(view.usage.node_hours)} node-h "
            f"(failed attempts {gpu_hours_text(view.usage.failed_gpu_hours)} GPU-h)"
        )
    lines.append(f"ledger: {view.ledger_uri or '-'}")
    return [printable(line) for line in lines]  # errors and decisions quote what jobs wrote


def _wave_status(wave: WaveView) -> str:
    """`running` while a job runs (with the backend's word once it says more than SUBMITTED)."""
    if wave.status is not WaveStatus.RUNNING:
        return wave.status.value
    if wave.sky_status is None or wave.sky_status in (JobStatus.SUBMITTED, JobStatus.RUNNING):
        return "running"
    return f"running ({wave.sky_status.value})"


def _wave_line(wave: WaveView) -> str:
    where = f"wave {wave.key.sequence:03d}" + (f", group {wave.key.group}" if wave.key.group else "")
    where += f"; {carried_text(wave.carried_labels())}" if wave.carried else ""
    served = served_words(wave.cache, wave.job_id)
    job = f"job {wave.job_id}" if wave.job_id else served or "no job yet"
    if served and wave.job_id:
        job += f", {served}"
    return f"{_states(wave)} attempt {wave.attempt}: {_wave_status(wave)} {job} ({where})"


def change_lines(before: RunStatusView | None, after: RunStatusView) -> list[str]:
    """What changed between two views, one line each, in the order it happened.

    A wave's launch, its end, the decision read after it: sorted by their own
    timestamps. Those have second precision, so within one second the order is
    the run's own: waves in sequence, each decision right after the wave of its
    state. A phase that starts things comes first, one that ends the run last.
    """
    stamp = time.strftime("%H:%M:%S")
    events: list[tuple[str, int, int, str]] = []  # (when, the wave it follows, launch/end/decision, line)
    phase_changed = before is None or before.phase != after.phase
    seen = {(w.key, w.attempt): w for w in (before.waves if before else [])}
    for index, wave in enumerate(after.waves):
        old = seen.get((wave.key, wave.attempt))
        if old is None or (old.status, old.job_id, _wave_status(old)) != (
            wave.status,
            wave.job_id,
            _wave_status(wave),
        ):
            ended = wave.status.is_final() and wave.ended_at
            events.append(
                (wave.ended_at if ended else wave.started_at, index, 1 if ended else 0, _wave_line(wave))
            )
    events.extend((when, len(after.waves), 0, f"waiting: {text}") for when, text in new_waits(before, after))
    new_from = len(before.decisions) if before else 0
    for position, decision in list(zip(_decision_positions(after), after.decisions, strict=True))[new_from:]:
        line = f"decision {decision.shown} from state {decision.state or '-'} <- {decision.uri}"
        events.append((decision.read_at, position, 2, line))
    lines = [f"{stamp} {text}" for *_, text in sorted(events, key=lambda e: e[:3])]
    if phase_changed:
        phase = f"{stamp} run {after.run_id}: {_phase(after)}"
        lines = [*lines, phase] if after.phase.is_final() else [phase, *lines]
    elif before is not None and before.pause_requested != after.pause_requested:
        lines.insert(0, f"{stamp} run {after.run_id}: {_phase(after)}")
    return [printable(line) for line in lines]  # items and URIs are named by whoever wrote them


def _decision_positions(view: RunStatusView) -> list[int]:
    """For each decision, the index of the wave it was read after: in order, one per run of its state.

    Each run of a deciding state yields one read, so the decisions are matched,
    in order, to the ended waves that ran their state (last attempts only), each wave used once.
    """
    latest = {wave.key: wave.attempt for wave in view.waves}  # waves come in attempt order
    used: set[tuple[int, str]] = set()
    positions, after = [], 0
    for decision in view.decisions:
        match = next(
            (
                index
                for index, wave in enumerate(view.waves[after:], start=after)
                if decision.state in wave.states
                and wave.status.is_final()
                and wave.attempt == latest[wave.key]  # a retried attempt yields no decision
                and (index, decision.state) not in used
            ),
            None,
        )
        if match is not None:
            used.add((match, decision.state))
            after = match
        positions.append(after)
    return positions


def _phase(view: RunStatusView) -> str:
    """The phase, saying so while a pause waits for in-flight waves."""
    if view.pause_requested and view.phase is RunPhase.RUNNING:
        return "running (pause requested: no new launches once in-flight waves finish)"
    return view.phase.value


class Progress:
    """Shows successive views: redrawn in place on a terminal, else as change lines."""

    def __init__(self, stream: IO[str] | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.last: RunStatusView | None = None
        self.notice = ""
        self._display: Any = None

    def __enter__(self) -> Progress:
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._display = Live(
                console=Console(file=self.stream), refresh_per_second=4, transient=False, auto_refresh=False
            )
            self._display.__enter__()
        return self

    def show(self, view: RunStatusView) -> None:
        """Draw the new view (or print what changed)."""
        if self._display is not None:
            self._redraw(view)
        else:
            for line in change_lines(self.last, view):
                print(line, file=self.stream, flush=True)
        self.last = view

    def note(self, text: str) -> None:
        """Say why nothing moves (no worker polls the queue); "" clears it.

        A stamped line in a pipe; a standing line under the view on a terminal.
        """
        self.notice = text
        if self._display is not None:
            self._redraw(self.last)
        elif text:
            print(f"{time.strftime('%H:%M:%S')} {text}", file=self.stream, flush=True)

    def _redraw(self, view: RunStatusView | None) -> None:
        from rich.text import Text

        lines = progress_lines(view) if view is not None else []
        self._display.update(Text("\n".join([*lines, *([self.notice] if self.notice else [])])), refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self._display is not None:
            self._display.__exit__(None, None, None)


#: How often a follower repeats that no worker polls the run's queue (plain output).
NO_WORKER_REPEAT_SECONDS = 15.0


#: How often the stream asks an ended run's status again when the query went unanswered.
FINAL_TRIES = 3


async def follow(
    fetch: Callable[[], Awaitable[Any]],
    ended: Callable[[], Awaitable[bool]],
    progress: Progress,
    interval: float = 1.0,
    no_worker: Callable[[], Awaitable[str]] | None = None,
) -> None:
    """Show a fresh view every `interval` until `ended()`, and once more after (the last changes).

    `no_worker()` says why nothing moves ("" while a worker polls): it is said at
    once and repeated until a worker polls again, and the status query (which only
    a worker answers) is not sent meanwhile. A fetch that fails (a busy worker's
    query timing out) is said once and asked again, never a silent gap; after the run
    ended it is asked up to FINAL_TRIES times, so the last changes are shown.
    """
    said_at: float | None = None
    failing, final_tries = False, 0
    while True:
        finished = await ended()
        missing = "" if finished or no_worker is None else await no_worker()
        if missing:
            if said_at is None or time.monotonic() - said_at >= NO_WORKER_REPEAT_SECONDS:
                progress.note(missing)
                said_at = time.monotonic()
        else:
            if said_at is not None:
                progress.note("" if progress.live else "a worker polls the run's task queue now")
                said_at = None
            try:
                progress.show(await fetch())
            except Exception as exc:  # noqa: BLE001 - any unanswered query: say it, ask again
                if not failing:
                    progress.note(
                        f"the run's status query went unanswered ({type(exc).__name__}); asking again"
                    )
                failing = True
                if finished and final_tries < FINAL_TRIES:
                    final_tries += 1
                    await asyncio.sleep(interval * final_tries)
                    continue
            else:
                if failing:
                    progress.note("" if progress.live else "the run answers its status query again")
                failing = False
        if finished:
            return
        await asyncio.sleep(interval)
