"""The text form of a run's status (`npaflow status`, duplicate submits)."""

from __future__ import annotations

from npaflow.cli.wait_lines import waiting_lines
from npaflow.printable import printable
from npaflow.runtime.cache.tally import CacheTally, served_words
from npaflow.runtime.summary import ReportedWave, StatusReport
from npaflow.runtime.usage import RunUsage, gpu_hours_text
from npaflow.runtime.vocabulary import RunPhase, WaveStatus
from npaflow.waves import carried_text, counted_states, items_text, pass_labels

#: The run's phase and Temporal's execution status that say the same thing (shown once).
_AGREEING = {
    "running": "RUNNING",
    "succeeded": "COMPLETED",
    "failed": "FAILED",
    "cancelled": "CANCELED",
    "terminated": "TERMINATED",
    "timed_out": "TIMED_OUT",
}

#: Phases of an open run that launch nothing now: its fan-outs wait, they do not run.
_STOPPED_PHASES = {RunPhase.SUSPENDED.value, RunPhase.PAUSED.value}


def status_text(report: StatusReport) -> str:
    """Phase, current states, each wave with its job (and the worker holding a local job)."""
    is_open = report.execution_status == "RUNNING"
    phase = report.phase
    if is_open and phase == "running" and report.pause_requested:
        waiting = ", ".join(counted_states(report.current_states)) or "the waves in flight"
        phase = f"pausing (waits for {waiting} to finish; nothing new launches)"
    temporal = report.execution_status
    agree = _AGREEING.get(report.phase) == temporal
    lines = [f"run {report.run_id}: {phase}" + ("" if agree else f" (Temporal: {temporal})")]
    if is_open:
        lines.append(f"current: {', '.join(counted_states(report.current_states)) or '-'}")
    if report.no_worker:
        lines.append(f"waiting: {report.no_worker}")
    if report.unreadable_answer:
        lines.append(f"shown from the memo only: {report.unreadable_answer}")
    lines.extend(f"waiting: {wait.text()}" for wait in report.quota_waits if is_open and wait.is_open())
    lines.extend(f"waiting: {line}" for line in waiting_lines(report) if is_open)
    lines.extend(f"quota: {wait.text()}" for wait in report.quota_waits if not wait.is_open())
    labels = pass_labels([wave.key for wave in report.waves])
    lines.extend(_left_out(report.waves_start, "wave attempts"))
    lines.extend(_wave_line(wave, labels[wave.key.sequence]) for wave in report.waves)
    lines.extend(_left_out(report.decisions_omitted, "decisions"))
    lines.extend(f"  {decision.line()}" for decision in report.decisions)
    lines.extend(_usage_lines(report.usage, is_open))
    lines.extend(_left_out(report.states_omitted, "states' hours (the cheapest)"))
    lines.extend(_cache_lines(report))
    stopped = report.phase if report.phase in _STOPPED_PHASES else ""
    lines.extend(fan_out.text(run_open=is_open, stopped=stopped) for fan_out in report.fan_outs)
    lines.extend(ending_lines(report))
    if report.error:
        lines.append(f"error: {report.error}")
    classes = [w.error_category for w in report.waves if w.error_category]
    if classes:
        lines.append(f"why: {classes[-1].value}: {classes[-1].explain()}")
    lines.append(f"ledger: {report.ledger_uri or '-'}")
    if report.worker_version:
        lines.append(f"worker version: {report.worker_version}")
    if report.ledger_behind:
        lines.append(f"ledger behind the run: {report.ledger_behind}")
    if report.ledger_repair:
        lines.append(f"ledger repair: {report.ledger_repair}")
    return printable("\n".join(lines))  # errors and decisions quote what jobs wrote


def _left_out(count: int, what: str) -> list[str]:
    """The line that says how many earlier records a bounded answer left to the ledger."""
    return [f"  ({count} earlier {what} are in the ledger)"] if count else []


def _wave_line(wave: ReportedWave, label: str) -> str:
    where = f" on worker {wave.worker_id}" if wave.worker_id else ""
    category = f" [{wave.error_category.value}]" if wave.error_category else ""
    sky = wave.sky_status.value if wave.sky_status else ""
    told = sky not in ("", "SUBMITTED", "RUNNING") or wave.status is not WaveStatus.RUNNING
    seen = f" ({sky})" if sky and told else ""
    job = f"job {wave.job_id}{where}{seen}" if wave.job_id else "no job yet"
    served = served_words(wave.cache, wave.job_id)
    if served:
        job = f"{job}, {served}" if wave.job_id else served
    status = f"{wave.status.value} (reconciled)" if wave.reconciled else wave.status.value
    carried = f" ({carried_text(wave.carried_labels())})" if wave.carried else ""
    return f"  {label}{items_text(wave.items)} attempt {wave.attempt}: {status}{category}, {job}{carried}"


def _usage_lines(usage: RunUsage | None, is_open: bool) -> list[str]:
    if usage is None or not usage.node_hours:
        return []
    lines = [
        f"gpu_hours: {gpu_hours_text(usage.gpu_hours)}{' so far' if is_open else ''} (node_hours "
        f"{gpu_hours_text(usage.node_hours)}; failed attempts {gpu_hours_text(usage.failed_gpu_hours)} GPU-h)"
    ]
    lines.extend(
        f"  {state}: {gpu_hours_text(part.gpu_hours)} GPU-h, {gpu_hours_text(part.node_hours)} node-h"
        for state, part in usage.by_state.items()
    )
    return lines


def ending_lines(report: StatusReport) -> list[str]:
    """The reconciled jobs, one line each, for the text status."""
    lines = [f"reconciled: {report.reconciled_note}"] if report.reconciled_note else []
    for job in report.reconciled:
        lines.append(
            f"reconciled: job {job.job_id} ({job.wave_key or job.job_name or '-'}, attempt "
            f"{job.attempt}) cancelled after the run ended {job.run_ending.value}: "
            f"{job.cancellation.state.value}" + (f" ({job.final_status.value})" if job.final_status else "")
        )
    return lines


def _cache_lines(report: StatusReport) -> list[str]:
    """The cache's tally, and for a miss why (the first one's reason) and where to read more."""
    steps = [step for wave in report.waves for step in wave.cache]
    cache = CacheTally.of(steps)
    if not cache.text():
        return []
    missed = next((step for step in steps if not step.hit), None)
    if missed is None:
        return [f"cache: {cache.text()}"]
    reason = f": {missed.reason[:200]}" if missed.reason else ""
    explain = f"npaflow cache explain {report.run_id} --state {missed.state}"
    return [f"cache: {cache.text()}; {missed.state} missed{reason} (why, key by key: {explain})"]
