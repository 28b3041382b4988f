"""What the Temporal UI shows of a run: a static summary and details at start, current details after.

Temporal renders these as Markdown on the workflow page; they are plain text
otherwise, so each item is one short line.
"""

from __future__ import annotations

from npaflow.ids import RunId
from npaflow.runtime.state_rows import StateRow
from npaflow.runtime.summary import ProgressView
from npaflow.runtime.usage import gpu_hours_text


def static_summary(workflow: str, spec_file: str) -> str:
    """One line for the workflow list: the spec's name and file."""
    return f"{workflow} ({spec_file})"


def static_details(
    *,
    workflow: str,
    run_id: RunId,
    ledger_uri: str,
    submitted_by: str,
    spec_file: str,
    variables: dict[str, str],
) -> str:
    """Who started what, and where its ledger is."""
    lines = [
        f"**spec** {workflow} ({spec_file})",
        f"**run id** {run_id}",
        f"**ledger** {ledger_uri or 'chosen by the worker'}",
        f"**submitted by** {submitted_by}",
    ]
    if variables:
        lines.append("**vars** " + ", ".join(f"{k}={v}" for k, v in sorted(variables.items())))
    return "  \n".join(lines)


def current_details(view: ProgressView) -> str:
    """Phase, running states with their jobs, progress, the last decision, GPU-hours, ledger."""
    lines = [
        f"**phase** {view.phase.value}",
        "**running** "
        + (
            ", ".join(
                f"{','.join(w.states)} (job {w.job_id or 'launching'}, since {w.started_at or '-'})"
                for w in view.running
            )
            or "-"
        ),
        f"**waves** {view.done} done of {view.total} so far"
        + (f", {view.retried} retried" if view.retried else ""),
    ]
    lines.extend(f"**quota** {text}" for text in view.quota_waits)
    last = view.last_decision
    if last is not None:
        lines.append(
            f"**last decision** {last.shown} from "
            f"{last.state or '-'} ({last.source or 'artifact'}: {last.uri})"
        )
    if view.cache.text():
        lines.append(f"**cache** {view.cache.text()}")
    usage = view.usage
    if usage.node_hours:
        lines.append(
            f"**GPU-hours** {gpu_hours_text(usage.gpu_hours)} "
            f"(node-hours {gpu_hours_text(usage.node_hours)}; "
            f"failed attempts {gpu_hours_text(usage.failed_gpu_hours)})"
        )
    lines.append(
        f"**ledger** {view.ledger_uri or '-'}"
        + (" (behind: the last export failed)" if view.ledger_behind else "")
    )
    if view.error:
        lines.append(f"**error** {view.error[:300]}")
    if view.page:
        lines.append(f"**run page** [{view.page}]({view.page})")
    text = "  \n".join(lines)
    return f"{text}\n\n{states_table(view.states, view.earlier_states)}" if view.states else text


#: A symbol per status, readable in the UI's markdown and in plain text alike.
_SYMBOL = {"pending": "·", "running": "▶", "succeeded": "✓", "failed": "✗", "cancelled": "⊘"}


def states_table(rows: list[StateRow], earlier: int = 0) -> str:
    """One markdown row per state: status, attempt, job, GPU-hours, cached; then how many ran before."""
    lines = ["| | state | attempt | job | GPU-hours | cached |", "|---|---|---|---|---|---|"]
    lines.extend(
        f"| {_SYMBOL.get(row.status.value, '?')} | {_cell(row.state)} | {row.attempt} | "
        f"{_cell(row.job_id) or '-'} | {gpu_hours_text(row.gpu_hours)} | {'yes' if row.cached else ''} |"
        for row in rows
    )
    if earlier:
        lines.append(f"| | … {earlier} earlier states | | | | |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
