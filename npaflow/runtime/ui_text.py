"""What the Temporal UI shows of a run: a static summary and details at start, current details after.

Temporal renders these as Markdown on the workflow page; they are plain text
otherwise, so each item is one short line. Every value that comes from a spec, a
job or an operator (names, decision values, errors, URIs) goes through `md`: HTML
and Markdown are escaped, lines joined and length bounded, so no text a user or a
job wrote can inject markup into the UI.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from npaflow.ids import RunId
from npaflow.printable import printable
from npaflow.runtime.progress_view import ProgressView
from npaflow.runtime.state_rows import StateRow
from npaflow.runtime.usage import gpu_hours_text
from npaflow.waves import wave_text

#: Characters Markdown gives a meaning to, escaped with a backslash.
_MARKDOWN = re.compile(r"([\\`*_\[\]()#!|~])")
#: The most characters one value shows (a 2,000-character state name is cut, with an ellipsis).
MAX_VALUE_CHARS = 200


def one_line(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A value on one line, cut at `limit` characters with an ellipsis (plain-text UI fields).

    Control characters show as their escapes: a name or an item is a job's or a user's text.
    """
    text = printable(" ".join(str(value).split()))
    return text[: limit - 1] + "…" if len(text) > limit else text


def md(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A value as inert text in Temporal's Markdown: HTML and Markdown escaped, one line, bounded."""
    text = one_line(value, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(r"\\\1", text)


def static_summary(workflow: str, spec_file: str) -> str:
    """One line for the workflow list: the spec's name and file (plain text: the list shows no Markdown)."""
    return " ".join(f"{workflow} ({spec_file})".split())[:400]


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
        f"**spec** {md(workflow)} ({md(spec_file)})",
        f"**run id** {md(run_id)}",
        f"**ledger** {md(ledger_uri or 'chosen by the worker', 400)}",
        f"**submitted by** {md(submitted_by)}",
    ]
    if variables:
        lines.append("**vars** " + ", ".join(f"{md(k)}={md(v)}" for k, v in sorted(variables.items())))
    return "  \n".join(lines)


def current_details(view: ProgressView) -> str:
    """Phase, running states with their jobs, progress, the last decision, GPU-hours, ledger."""
    running = (
        f"{md(wave_text(w.states, w.items))} (job {md(w.job_id or 'launching')}, since {w.started_at or '-'})"
        for w in view.running
    )
    lines = [
        f"**phase** {view.phase.value}",
        "**running** " + (", ".join(running) or "-"),
        f"**waves** {view.done} done of {view.total} so far"
        + (f", {view.retried} retried" if view.retried else ""),
    ]
    lines.extend(f"**quota** {md(text, 400)}" for text in view.quota_waits)
    lines.extend(f"**waiting** {md(text, 400)}" for text in view.cache_waits)
    last = view.last_decision
    if last is not None:
        lines.append(
            f"**last decision** {md(last.shown)} from "
            f"{md(last.state or '-')} ({md(last.source or 'artifact')}: {md(last.uri, 400)})"
        )
    if view.cache.text():
        lines.append(f"**cache** {md(view.cache.text())}")
    usage = view.usage
    if usage.node_hours:
        lines.append(
            f"**GPU-hours** {gpu_hours_text(usage.gpu_hours)} "
            f"(node-hours {gpu_hours_text(usage.node_hours)}; "
            f"failed attempts {gpu_hours_text(usage.failed_gpu_hours)})"
        )
    lines.append(
        f"**ledger** {md(view.ledger_uri or '-', 400)}"
        + (" (behind: the last export failed)" if view.ledger_behind else "")
    )
    if view.error:
        lines.append(f"**error** {md(view.error, 300)}")
    if view.page:  # an http(s) address the worker checked at start
        lines.append(f"**run page** [{md(view.page, 400)}]({quote(view.page, safe=':/?&=%#')})")
    text = "  \n".join(lines)
    return f"{text}\n\n{states_table(view.states, view.earlier_states)}" if view.states else text


#: A symbol per status, readable in the UI's markdown and in plain text alike.
_SYMBOL = {"pending": "·", "running": "▶", "succeeded": "✓", "failed": "✗", "cancelled": "⊘"}


def states_table(rows: list[StateRow], earlier: int = 0) -> str:
    """One markdown row per state (status, attempt, job, GPU-hours, where the cache served it from).

    Then how many states ran before the rows shown.
    """
    lines = ["| | state | attempt | job | GPU-hours | cached |", "|---|---|---|---|---|---|"]
    lines.extend(
        f"| {_SYMBOL.get(row.status.value, '?')} | {_cell(row.state)} | {row.attempt} | "
        f"{_cell(row.job_id) or '-'} | {gpu_hours_text(row.gpu_hours)} | "
        f"{'from run ' + _cell(row.cached_from) if row.cached_from else ''} |"
        for row in rows
    )
    if earlier:
        lines.append(f"| | … {earlier} earlier states | | | | |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return md(text)
