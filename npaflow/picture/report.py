"""`report.html`: one run as a page that needs nothing else (inline SVG and CSS, no script).

Written beside `runtime.json` when a run ends, so whoever has only the bucket
sees the run: its graph coloured by what happened, the timeline of every attempt,
the decisions read and where from, GPU-hours by state, and every state's jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from pydantic import BaseModel

from npaflow.decisions import unknown_decision_note
from npaflow.document.models import WorkflowSpec
from npaflow.picture.blocks import spec_blocks
from npaflow.picture.layout import spec_layout
from npaflow.picture.node_states import NodePhase, NodeView, node_views
from npaflow.picture.svg import PHASE_COLOURS, graph_svg
from npaflow.picture.timeline import timeline_svg
from npaflow.presets import FROZEN
from npaflow.printable import html_text
from npaflow.runtime.ledger.models import RuntimeLedger
from npaflow.runtime.usage import gpu_hours_text

CSS = """
body{font:14px/1.45 sans-serif;color:#1d232b;margin:24px;max-width:1400px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px}
.meta{color:#4a5360} .scroll{overflow-x:auto;border:1px solid #e1e4e8;border-radius:6px;padding:8px}
table{border-collapse:collapse} td,th{padding:4px 10px;border-bottom:1px solid #e1e4e8;text-align:left}
th{font-weight:600;background:#f6f8fa} .num{text-align:right;font-variant-numeric:tabular-nums}
.error{color:#c93636;white-space:pre-wrap} .chip{display:inline-block;padding:0 8px;border-radius:9px}
code{background:#f6f8fa;padding:0 4px;border-radius:3px}
"""


#: The file's own policy: a browser opening it runs no script and loads nothing, whatever a
#: job wrote into a name, decision or error it shows (they are escaped; this is the second wall).
OFFLINE_POLICY = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">"
)


class ReportLinks(BaseModel):
    """Where the page may link (none of it needed to read the page)."""

    model_config = FROZEN

    temporal_ui: str = ""  # the run's page in the Temporal UI
    logs: str = ""  # a URL template with {state}; "" shows the `npaflow logs` command instead


def chip(view: NodeView) -> str:
    """The phase as a coloured label."""
    fill, stroke = PHASE_COLOURS[view.phase]
    return f'<span class="chip" style="background:{fill};border:1px solid {stroke}">{view.phase.value}</span>'


def _jobs(view: NodeView) -> str:
    """A state's jobs; a state the cache served names where its outputs came from instead."""
    served = view.detail if view.phase is NodePhase.CACHED else ""
    return ", ".join([*view.job_ids, served] if served else view.job_ids)


def _states_table(ledger: RuntimeLedger, views: dict[str, NodeView], links: ReportLinks) -> str:
    rows = []
    for name, view in views.items():
        if not view.attempts and not view.job_ids:
            continue
        logs = (
            f'<a href="{html_text(links.logs.format(state=quote(name)))}">logs</a>'
            if links.logs
            else f"<code>npaflow logs {html_text(ledger.run_id)} --state {html_text(name)}</code>"
        )
        rows.append(
            f"<tr><td>{html_text(name)}</td><td>{chip(view)}</td><td class=num>{view.attempts}</td>"
            f"<td class=num>{view.iteration or ''}</td><td>{html_text(_jobs(view))}</td>"
            f"<td class=num>{gpu_hours_text(view.gpu_hours)}</td><td>{logs}</td>"
            f"<td class=error>{html_text(view.error[:500])}</td></tr>"
        )
    head = (
        "<tr><th>state</th><th>phase</th><th>attempts</th><th>iteration</th><th>jobs</th>"
        "<th>GPU-hours</th><th>logs</th><th>error</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>" if rows else "<p>No wave launched.</p>"


def _note(decision: str) -> str:
    """A decision no predicate can match, said beside it (a misspelt `promote` reads as neither)."""
    note = unknown_decision_note(decision)
    return f' <span class="error">({html_text(note)})</span>' if note else ""


def _decisions_table(ledger: RuntimeLedger) -> str:
    if not ledger.decisions:
        return "<p>No decision read.</p>"
    rows = "".join(
        f"<tr><td>{html_text(d.state)}</td><td><b>{html_text(d.shown)}</b>{_note(d.decision)}</td>"
        f"<td>{html_text(d.source.value)}</td><td>{html_text(d.uri)}</td><td>{html_text(d.read_at)}</td></tr>"
        for d in ledger.decisions
    )
    return (
        "<table><tr><th>state</th><th>decision</th><th>source</th><th>read from</th><th>at</th></tr>"
        f"{rows}</table>"
    )


def _usage_table(ledger: RuntimeLedger) -> str:
    """Each state's spend, the costliest first (ties in the order states first ran)."""
    usage = ledger.usage
    costliest = sorted(usage.by_state.items(), key=lambda item: (-item[1].gpu_hours, -item[1].node_hours))
    rows = "".join(
        f"<tr><td>{html_text(state)}</td><td class=num>{gpu_hours_text(part.gpu_hours)}</td>"
        f"<td class=num>{gpu_hours_text(part.node_hours)}</td>"
        f"<td class=num>{gpu_hours_text(part.failed_gpu_hours)}</td></tr>"
        for state, part in costliest
    )
    total = (
        f"<tr><th>total</th><th class=num>{gpu_hours_text(usage.gpu_hours)}</th>"
        f"<th class=num>{gpu_hours_text(usage.node_hours)}</th>"
        f"<th class=num>{gpu_hours_text(usage.failed_gpu_hours)}</th></tr>"
    )
    head = "<tr><th>state</th><th>GPU-hours</th><th>node-hours</th><th>on failed attempts</th></tr>"
    return f"<table>{head}{rows}{total}</table>{_waits(ledger)}"


def _waits(ledger: RuntimeLedger) -> str:
    """Each wave's wait for quota GPUs, a line each (what it waited for, since when, how long)."""
    if not ledger.quota_waits:
        return ""
    items = "".join(f'<li class="quota-wait">{html_text(wait.text())}</li>' for wait in ledger.quota_waits)
    return f"<h3>Quota waits</h3><ul>{items}</ul>"


def run_sections(
    spec: WorkflowSpec,
    ledger: RuntimeLedger,
    *,
    now: float,
    links: ReportLinks | None = None,
    waiting: dict[str, str] | None = None,
    notes: Sequence[str] = (),
) -> dict[str, str]:
    """Each part of a run's page by element id: the report and the live page share them."""
    links = links or ReportLinks()
    views = node_views(spec_blocks(spec), ledger, waiting)
    temporal = f' · <a href="{html_text(links.temporal_ui)}">Temporal UI</a>' if links.temporal_ui else ""
    error = f'<p class="error">{html_text(ledger.error)}</p>' if ledger.error else ""
    reasons = [*notes, *sorted(set((waiting or {}).values()))]
    waits = "".join(f'<p class="waiting" id="run-waiting">{html_text(reason)}</p>' for reason in reasons[:5])
    return {
        "meta": (
            f"workflow <b>{html_text(spec.name)}</b> · status "
            f'<b id="run-status">{html_text(ledger.status.value)}</b>'
            f" · updated {html_text(ledger.updated_at or '-')} · "
            f"{gpu_hours_text(ledger.usage.gpu_hours)} GPU-hours"
            f"{temporal}{waits}{error}"
        ),
        "graph": graph_svg(spec_layout(spec), views, title=f"{spec.name}: {ledger.run_id}"),
        "timeline": timeline_svg(ledger.waves, now, ledger.quota_waits) or _nothing_launched(reasons),
        "states": _states_table(ledger, views, links),
        "decisions": _decisions_table(ledger),
        "usage": _usage_table(ledger),
    }


def _nothing_launched(reasons: list[str]) -> str:
    """The timeline before any launch: what the run waits for, when it waits."""
    return f"<p>Nothing launched yet: {html_text(reasons[0])}.</p>" if reasons else "<p>Nothing launched.</p>"


def page_html(title: str, heading: str, sections: dict[str, str], *, head: str = "", tail: str = "") -> str:
    """A run's page around its sections (`head` and `tail` add what a live page needs)."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html_text(title)}</title>"
        f"<style>{CSS}</style>{head}</head><body>{heading}"
        f'<div class="meta" id="meta">{sections["meta"]}</div>'
        f'<h2>Graph</h2><div class="scroll" id="graph">{sections["graph"]}</div>'
        f'<h2>Timeline</h2><div class="scroll" id="timeline">{sections["timeline"]}</div>'
        f'<h2>States</h2><div id="states">{sections["states"]}</div>'
        f'<h2>Decisions</h2><div id="decisions">{sections["decisions"]}</div>'
        f'<h2>GPU-hours</h2><div id="usage">{sections["usage"]}</div>{tail}'
        "</body></html>\n"
    )


def report_html(
    spec: WorkflowSpec, ledger: RuntimeLedger, *, now: float, links: ReportLinks | None = None
) -> str:
    """The whole page for one run, as it stands in `ledger` (`now`: epoch seconds, for what still runs)."""
    sections = run_sections(spec, ledger, now=now, links=links)
    title = f"{ledger.run_id} · {spec.name} · npaflow"
    return page_html(title, f"<h1>{html_text(ledger.run_id)}</h1>", sections, head=OFFLINE_POLICY)
