"""The run's timeline: one row per wave (its states and loop iterations), one bar per attempt.

A bar runs from the launch to the end (or to the newest observation while it
runs): the part before the first task started is drawn pale (launching,
provisioning), the rest in the attempt's colour; a failed attempt ends in a cross.
A success whose task rows are not at hand (an earlier execution's, replayed) ran:
it is drawn solid from its launch.
A wave's wait for quota GPUs is a bar of its own (in the waiting colour), from
the ask to the grant, or to now while it waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npaflow.picture.geometry import CHAR_WIDTH, MARGIN
from npaflow.picture.node_states import NodePhase
from npaflow.picture.svg import PHASE_COLOURS
from npaflow.printable import html_text
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import carried_text, items_text, labels_of, pass_labels

ROW = 22.0
BARS_WIDTH = 720.0
AXIS = 26.0
_PHASE = {
    WaveStatus.PENDING: NodePhase.PENDING,
    WaveStatus.RUNNING: NodePhase.RUNNING,
    WaveStatus.SUCCEEDED: NodePhase.SUCCEEDED,
    WaveStatus.FAILED: NodePhase.FAILED,
    WaveStatus.CANCELLED: NodePhase.CANCELLED,
}


@dataclass(frozen=True)
class Bar:
    """One attempt on the time axis, in seconds from the run's first launch."""

    row: int
    attempt: int
    launched: float
    started: float  # the first task's start (== launched when it never started)
    ended: float
    phase: NodePhase
    text: str
    ran: bool = True  # a task started (a job that ran within one second still shows it ran)


def _seconds(stamp: str) -> float | None:
    return epoch_seconds(stamp) if stamp else None


def _end(wave: WaveAttemptRecord, now: float) -> float:
    observed = wave.observations[-1].observed_at if wave.observations else ""
    return _seconds(wave.ended_at) or _seconds(observed) or now


def timeline_bars(
    waves: list[WaveAttemptRecord], now: float, waits: Sequence[QuotaWait] = ()
) -> tuple[list[str], list[Bar], float]:
    """The row labels, the bars, and the span in seconds (every time relative to the first launch)."""
    launched = [(wave, _seconds(wave.started_at)) for wave in waves]
    timed = [(wave, at) for wave, at in launched if at is not None]
    queued = [(wait, at) for wait, at in ((w, _seconds(w.queued_at)) for w in waits) if at is not None]
    if not timed and not queued:
        return [], [], 0.0
    origin = min([at for _, at in timed] + [at for _, at in queued])
    labels = pass_labels([wave.key for wave, _ in timed])
    rows: dict[str, int] = {}
    bars = [_wait_bar(wait, origin, now, rows) for wait, _ in queued]
    for wave, at in timed:
        label = labels[wave.key.sequence]
        row = rows.setdefault(label, len(rows))
        starts = [s for s in (_seconds(t.start_at) for t in wave.tasks) if s is not None]
        ran = bool(starts) or wave.status is WaveStatus.SUCCEEDED  # a success ran, rows or not
        end = max(_end(wave, now), at)
        started = min(max(min(starts, default=at if ran else end), at), end)
        phase = _PHASE[wave.status]
        text = f"{label}{items_text(wave.items)} · attempt {wave.attempt} · {phase.value}"
        if wave.carried:
            text += f" · {carried_text(labels_of(wave.key, wave.items, {m.item for m in wave.carried}))}"
        if wave.job_id:
            text += f" · job {wave.job_id}"
        if wave.error:
            text += f"\n{wave.error[:300]}"
        bar = Bar(row, wave.attempt, at - origin, started - origin, end - origin, phase, text, ran)
        bars.append(bar)
    return list(rows), bars, max(bar.ended for bar in bars) or 1.0


def _wait_bar(wait: QuotaWait, origin: float, now: float, rows: dict[str, int]) -> Bar:
    """A wave's wait for quota GPUs: one solid bar in the waiting colour, on its own row."""
    row = rows.setdefault(f"{wait.states()} (quota wait)", len(rows))
    asked = (_seconds(wait.queued_at) or now) - origin
    end = (_seconds(wait.granted_at or wait.left_at) or now) - origin
    return Bar(row, 1, asked, asked, max(end, asked), NodePhase.WAITING, wait.text())


#: Steps the axis counts in: round seconds, minutes and hours (a reader adds 10 s, not 7.75 s).
_STEPS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600)


def ticks(span: float) -> list[float]:
    """Where the axis is marked: 0 and every round step up to `span`, about five marks."""
    step = next((s for s in _STEPS if span / s <= 5), 12 * 3600 * max(1, round(span / (5 * 12 * 3600))))
    return [n * step for n in range(int(span / step + 1e-9) + 1)]


def _tick_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{round(seconds / 3600, 1):g} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} m"
    if seconds >= 10 or seconds == 0:
        return f"{seconds:.0f} s"
    return f"{seconds:.2f}".rstrip("0").rstrip(".") + " s"


def timeline_svg(waves: list[WaveAttemptRecord], now: float, waits: Sequence[QuotaWait] = ()) -> str:
    """The Gantt chart of every wave attempt and quota wait ("" when nothing launched or waited yet)."""
    labels, bars, span = timeline_bars(waves, now, waits)
    if not bars:
        return ""
    left = MARGIN + CHAR_WIDTH * max(len(label) for label in labels) + 12
    width, height = left + BARS_WIDTH + MARGIN, AXIS + ROW * len(labels) + MARGIN
    scale = BARS_WIDTH / span
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="npa-timeline" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="timeline">'
        "<style>.npa-timeline text{font:11px sans-serif;fill:#1d232b}"
        ".npa-timeline .tick{stroke:#e1e4e8}</style>"
    ]
    for at in ticks(span):
        x = left + at * scale
        parts.append(
            f'<line class="tick" x1="{x:.1f}" y1="{AXIS - 6:.1f}" x2="{x:.1f}" y2="{height - MARGIN:.1f}"/>'
            f'<text x="{x:.1f}" y="{AXIS - 10:.1f}" text-anchor="middle">{_tick_text(at)}</text>'
        )
    for row, label in enumerate(labels):
        y = AXIS + ROW * row + ROW * 0.7
        parts.append(f'<text x="{MARGIN:.1f}" y="{y:.1f}">{html_text(label)}</text>')
    for bar in bars:
        parts.append(_bar(bar, left, scale))
    parts.append("</svg>")
    return "".join(parts)


def _bar(bar: Bar, left: float, scale: float) -> str:
    fill, stroke = PHASE_COLOURS[bar.phase]
    y = AXIS + ROW * bar.row + 4
    x0, x1, x2 = (left + t * scale for t in (bar.launched, bar.started, bar.ended))
    x2 = max(x2, x0 + 2, x1 + 2 if bar.ran else 0)  # one that ended at once, or ran briefly, is seen
    drawn = (
        f'<g class="bar phase-{bar.phase.value}" data-attempt="{bar.attempt}">'
        f"<title>{html_text(bar.text)}</title>"
        f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0, 0):.1f}" height="{ROW - 8:.1f}" '
        f'fill="{PHASE_COLOURS[NodePhase.LAUNCHING][0]}" stroke="{stroke}" stroke-dasharray="2 2"/>'
        f'<rect x="{x1:.1f}" y="{y:.1f}" width="{max(x2 - x1, 0):.1f}" height="{ROW - 8:.1f}" '
        f'fill="{fill}" stroke="{stroke}"/>'
    )
    if bar.phase is NodePhase.FAILED:
        drawn += f'<text x="{x2 + 3:.1f}" y="{y + ROW - 10:.1f}" fill="{stroke}">✕</text>'
    return drawn + "</g>"
