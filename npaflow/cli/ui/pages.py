"""The pages `npaflow ui` serves: the runs list and a run's live page (server-rendered).

A run's page is the report's sections (npaflow/picture/report.py) drawn from the
run's live `status` query, plus a few lines of inline script that fetch fresh
sections every LIVE_SECONDS and swap them in place (no reload), until the run ends.
Nothing is loaded from anywhere but this server.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote, urlencode

from npaflow.cli.list_handler import LISTED_PHASES
from npaflow.cli.run_row import RunRow
from npaflow.cli.ui.reads import Snapshot
from npaflow.picture import spec_svg
from npaflow.picture.live import ledger_of_view, waiting_states
from npaflow.picture.report import CSS, ReportLinks, page_html, run_sections
from npaflow.printable import html_text
from npaflow.runtime.reconcile.ledger_change import how_it_ended
from npaflow.runtime.usage import gpu_hours_text
from npaflow.runtime.vocabulary import RunEnding, RunPhase

LIVE_SECONDS = 2
PAGE_SIZE = 50
_UI_CSS = (
    ".banner{padding:8px 12px;border-radius:6px;margin:10px 0;background:#fff4d6;border:1px solid #c99a06}"
    "nav a{margin-right:12px} form{margin:12px 0} input,select{font:inherit;padding:2px 6px}"
)
#: The page's one script (allowed by its hash in the policy, npaflow/cli/ui/policy.py).
LIVE_SCRIPT = """
(function(){
  var period=PERIOD_MS;
  function tick(){
    fetch(location.pathname+'/live',{cache:'no-store',credentials:'same-origin'})
      .then(function(r){return r.ok?r.json():null;})
      .then(function(d){
        if(!d){setTimeout(tick,period);return;}
        for(var id in d.sections){var el=document.getElementById(id);if(el){el.innerHTML=d.sections[id];}}
        document.getElementById('banner').innerHTML=d.banner;
        document.body.setAttribute('data-updated',String(Date.now()));
        if(!d.ended){setTimeout(tick,period);}
      })
      .catch(function(){setTimeout(tick,period);});
  }
  setTimeout(tick,period);
})();
""".replace("PERIOD_MS", str(LIVE_SECONDS * 1000))


def temporal_link(temporal_ui: str, namespace: str, run_id: str) -> str:
    """The run's page in the Temporal UI ("" when its address is unknown)."""
    if not temporal_ui:
        return ""
    return f"{temporal_ui.rstrip('/')}/namespaces/{quote(namespace)}/workflows/{quote(run_id)}"


def live_sections(shot: Snapshot, links: ReportLinks) -> dict[str, str]:
    """The page's sections now: from the live query, else the spec alone with what Temporal says."""
    if shot.view is not None and shot.spec is not None:
        ledger = ledger_of_view(shot.view, updated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        if shot.ending is not None:
            ledger = ledger.model_copy(
                update={"status": shot.ending.ledger_status(), "error": ledger.error or _ended_behind(shot)}
            )
        paused = shot.view.phase is RunPhase.PAUSED or (shot.open and shot.view.pause_requested)
        notes = [f"paused: nothing new launches (npaflow resume {shot.run_id} continues)"] if paused else []
        notes += [f"waiting: {stall.text}" for stall in shot.view.stalled] if shot.open else []
        return run_sections(
            shot.spec,
            ledger,
            now=time.time(),
            links=links,
            waiting=waiting_states(shot.view, shot.spec),
            notes=notes,
        )
    status = html_text(shot.execution_status.lower())
    graph = spec_svg(shot.spec) if shot.spec is not None else "<p>The run's spec could not be read.</p>"
    empty = "<p>Shown once a worker answers for the run.</p>" if shot.open else "<p>None: the run ended.</p>"
    return {
        "meta": f'status <b id="run-status">{status}</b> (from Temporal)',
        "graph": graph,
        "timeline": empty,
        "states": empty,
        "decisions": empty,
        "usage": empty,
    }


def _ended_behind(shot: Snapshot) -> str:
    """Why a run ended without its code's cleanup, and what became of its last jobs."""
    how = how_it_ended(shot.ending or RunEnding.TERMINATED)
    return f"{how}; {shot.reconciled}" if shot.reconciled else how


def banner(shot: Snapshot) -> str:
    """What the reader must know first: no worker, or why the view is not live."""
    return f'<div class="banner">{html_text(shot.problem)}</div>' if shot.problem else ""


def ended(shot: Snapshot) -> bool:
    """Whether the page can stop refreshing."""
    if shot.open:
        return False
    return shot.view is None or shot.view.phase.is_final() or (shot.ending is not None and shot.settled)


def run_page(shot: Snapshot, links: ReportLinks) -> str:
    """A run's whole page, refreshing itself while the run moves."""
    heading = (
        f'<nav><a href="/">all runs</a></nav><h1>{html_text(shot.run_id)}</h1>'
        f'<div id="banner">{banner(shot)}</div>'
    )
    tail = "" if ended(shot) else f"<script>{LIVE_SCRIPT}</script>"
    head = f"<style>{_UI_CSS}</style>"
    name = shot.spec.name if shot.spec is not None else "?"
    return page_html(
        f"{shot.run_id} · {name} · npaflow", heading, live_sections(shot, links), head=head, tail=tail
    )


def live_payload(shot: Snapshot, links: ReportLinks) -> dict[str, Any]:
    """What the page's script swaps in."""
    return {"sections": live_sections(shot, links), "banner": banner(shot), "ended": ended(shot)}


def _filters(phase: str, spec: str) -> str:
    options = "".join(
        f'<option value="{p}"{" selected" if p == phase else ""}>{p}</option>' for p in LISTED_PHASES
    )
    return (
        '<form method="get" action="/"><label>phase <select name="phase"><option value="">any</option>'
        f'{options}</select></label> <label>spec <input name="spec" value="{html_text(spec)}"></label> '
        '<button type="submit">filter</button></form>'
    )


def _row(row: RunRow) -> str:
    hours = "-" if row.gpu_hours is None else f"{gpu_hours_text(row.gpu_hours)}"
    phase = row.phase or row.execution_status.lower()
    return (
        f'<tr data-phase="{html_text(phase)}">'
        f'<td><a href="/runs/{quote(row.run_id)}">{html_text(row.run_id)}</a>'
        f"</td><td>{html_text(row.spec or '-')}</td><td>{html_text(row.shown_phase())}</td>"
        f"<td>{html_text(row.started_at)}</td><td class=num>{row.duration_seconds:.0f} s</td>"
        f"<td class=num>{hours}</td><td class=num>{row.executions}</td></tr>"
    )


def runs_page(rows: list[RunRow], phase: str, spec: str, page: int) -> str:
    """The runs list, newest first, filtered and paged (PAGE_SIZE a page)."""
    shown = rows[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    body = "".join(_row(row) for row in shown) or '<tr><td colspan="7">No run matches.</td></tr>'
    pages = []
    if page > 0:
        pages.append(f'<a href="/?{urlencode({"phase": phase, "spec": spec, "page": page - 1})}">newer</a>')
    if len(rows) > (page + 1) * PAGE_SIZE:
        pages.append(f'<a href="/?{urlencode({"phase": phase, "spec": spec, "page": page + 1})}">older</a>')
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>runs · npaflow</title>"
        f"<style>{CSS}{_UI_CSS}</style></head><body><h1>npaflow runs</h1>{_filters(phase, spec)}"
        "<table id=runs><tr><th>run</th><th>spec</th><th>phase</th><th>started</th><th>duration</th>"
        f"<th>GPU-hours</th><th>executions</th></tr>{body}</table>"
        f"<nav>{' '.join(pages)}</nav></body></html>\n"
    )


def message_page(title: str, text: str) -> str:
    """A one-line answer (no such run, not allowed) as a page."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html_text(title)} · npaflow</title>"
        f'<style>{CSS}</style></head><body><nav><a href="/">all runs</a></nav><h1>{html_text(title)}</h1>'
        f"<p>{html_text(text)}</p></body></html>\n"
    )
