"""`report.html` and the timeline: one run as a page that needs nothing else."""

from __future__ import annotations

import re

import pytest

from npaflow.catalog.load import load_catalogs
from npaflow.cli.ui.reads import RunReads, Snapshot
from npaflow.picture.report import ReportLinks, report_html
from npaflow.picture.timeline import timeline_bars, timeline_svg
from npaflow.runtime.ledger.attempt import TaskRow, WaveAttemptRecord
from npaflow.runtime.ledger.models import DecisionRecord, RuntimeLedger
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.runtime.vocabulary import LedgerStatus, WaveStatus
from npaflow.spec.load import load_spec_from_path
from npaflow.waves import WaveKey
from tests.helpers import EXAMPLES

pytestmark = pytest.mark.unit
T30 = "2026-12-03T01:00:30Z"


def attempt(
    key: str, status: WaveStatus, start: str, end: str, attempt: int = 1, **extra: str
) -> WaveAttemptRecord:
    row = TaskRow(job_id="j", start_at=extra.pop("task_start", start), end_at=end)
    return WaveAttemptRecord(
        key=WaveKey.parse(key), status=status, attempt=attempt, started_at=start, ended_at=end, tasks=[row]
    ).model_copy(update=extra)


def failed_gate_ledger() -> RuntimeLedger:
    return RuntimeLedger(
        workflow="gate-loop",
        run_id="gate-1",
        api_version="npa.workflow/v0.0.1",
        status=LedgerStatus.FAILED,
        error="wave score-batch failed",
        waves=[
            attempt(
                "001|serial|refine:caption-batch:-",
                WaveStatus.SUCCEEDED,
                "2026-12-03T01:00:00Z",
                "2026-12-03T01:00:10Z",
                task_start="2026-12-03T01:00:04Z",
            ),
            attempt(
                "002|serial|refine:score-batch:-",
                WaveStatus.FAILED,
                "2026-12-03T01:00:10Z",
                "2026-12-03T01:00:20Z",
                job_id="41",
                error="exit 3: <not fixed>",
            ),
        ],
        decisions=[DecisionRecord(state="quality-gate", uri="file:///d.json", decision="loop_back")],
    )


def test_a_bar_is_pale_until_its_first_task_starts_and_each_loop_pass_gets_its_own_row() -> None:
    waves = [
        attempt(
            "001|serial|refine:a:-",
            WaveStatus.SUCCEEDED,
            "2026-12-03T01:00:00Z",
            "2026-12-03T01:00:10Z",
            task_start="2026-12-03T01:00:04Z",
        ),
        attempt("002|serial|refine:a:-", WaveStatus.FAILED, "2026-12-03T01:00:10Z", "2026-12-03T01:00:20Z"),
        attempt(
            "002|serial|refine:a:-", WaveStatus.SUCCEEDED, "2026-12-03T01:00:20Z", "2026-12-03T01:00:30Z", 2
        ),
    ]
    labels, bars, span = timeline_bars(waves, now=0)
    assert labels == ["a #1", "a #2"] and span == 30
    assert [(b.row, b.launched, b.started, b.ended) for b in bars] == [
        (0, 0, 4, 10),
        (1, 10, 10, 20),
        (1, 20, 20, 30),
    ]
    assert "✕" in timeline_svg(waves, now=0)  # the failed attempt is marked


def test_a_retried_fan_out_batch_s_bar_says_which_members_it_did_not_launch_again() -> None:
    from npaflow.runtime.ledger import CarriedMember

    key = "002|g|g:shard@000000000000:-,g:shard@000000000001:-"
    retry = attempt(key, WaveStatus.SUCCEEDED, "2026-12-03T01:00:00Z", T30, attempt=2).model_copy(
        update={"items": ["a", "b"], "carried": [CarriedMember(item="000000000000", attempt=1, job_id="j1")]}
    )
    _, (bar,), _ = timeline_bars([retry], now=0)
    assert "[a, b] · attempt 2 · succeeded · a done before" in bar.text


def test_a_replayed_success_without_task_rows_is_drawn_solid_from_its_launch() -> None:
    replayed = attempt("001|serial|:a:-", WaveStatus.SUCCEEDED, "2026-12-03T01:00:00Z", T30, tasks=[])
    _, (bar,), _ = timeline_bars([replayed], now=0)
    assert (bar.launched, bar.started, bar.ended, bar.ran) == (0, 0, 30, True)


def test_an_attempt_that_ended_before_any_task_started_is_drawn_pale() -> None:
    never = attempt("001|serial|:a:-", WaveStatus.FAILED, "2026-12-03T01:00:00Z", T30, tasks=[])
    _, (bar,), _ = timeline_bars([never], now=0)
    assert (bar.started, bar.ended, bar.ran) == (30, 30, False)


def test_a_running_attempt_is_drawn_up_to_now() -> None:
    running = attempt("001|serial|:a:-", WaveStatus.RUNNING, "2026-12-03T01:00:00Z", "")
    _, (bar,), _ = timeline_bars([running], now=epoch_seconds(T30))
    assert bar.ended - bar.launched == 30


def test_the_report_shows_the_failed_state_with_its_error_the_decisions_and_how_to_read_logs() -> None:
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    page = report_html(spec, failed_gate_ledger(), now=0)
    assert 'data-state="score-batch" data-phase="failed"' in page
    assert 'data-state="publish" data-phase="skipped"' in page
    assert "exit 3: &lt;not fixed&gt;" in page  # escaped, never markup
    assert "npaflow logs gate-1 --state score-batch" in page and "loop_back" in page


def test_the_report_loads_nothing_from_anywhere_and_links_only_where_it_is_told() -> None:
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    page = report_html(spec, failed_gate_ledger(), now=0)
    assert "<script" not in page and not re.search(r"(?:src|href)=\"(?!#)|url\((?!#)|@import", page)
    linked = report_html(
        spec, failed_gate_ledger(), now=0, links=ReportLinks(temporal_ui="http://127.0.0.1:8233/x")
    )
    assert re.findall(r'href="([^"#]+)"', linked) == ["http://127.0.0.1:8233/x"]


def test_the_page_server_refuses_a_reader_without_its_token_and_keeps_one_that_gave_it() -> None:
    from starlette.testclient import TestClient

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads

    app = ui_app(RunReads(client=None), UiSettings(namespace="default", token="s3cret"))  # type: ignore[arg-type]
    with TestClient(app) as browser:
        assert browser.get("/runs/x").status_code == 401
        assert browser.get("/runs/x", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert browser.get("/healthz").status_code == 200
        entered = browser.get("/?token=s3cret", follow_redirects=False)
        assert entered.status_code == 303 and "npaflow_ui_token" in entered.headers["set-cookie"]


def test_the_runs_page_refuses_a_page_number_spelled_in_other_digits() -> None:
    from starlette.testclient import TestClient

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads

    app = ui_app(RunReads(client=None), UiSettings(namespace="default"))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as browser:
        answer = browser.get("/?page=²")
    assert answer.status_code == 400 and "Bad page" in answer.text


def test_the_runs_page_refuses_a_spec_filter_no_spec_name_can_hold() -> None:
    from starlette.testclient import TestClient

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads

    app = ui_app(RunReads(client=None), UiSettings(namespace="default"))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as browser:
        answer = browser.get("/?spec=%00")
    assert answer.status_code == 400 and "Bad filter" in answer.text


def test_a_read_the_temporal_server_refuses_is_a_page_saying_why_not_a_500() -> None:
    from starlette.testclient import TestClient
    from temporalio.service import RPCError, RPCStatusCode

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads

    class Refusing(RunReads):
        async def runs(self, phase: str, spec: str, limit: int) -> list[dict[str, object]]:
            raise RPCError("ListWorkflowExecutions operation failed", RPCStatusCode.INVALID_ARGUMENT, b"")

    app = ui_app(Refusing(client=None), UiSettings(namespace="default"))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as browser:
        answer = browser.get("/?spec=x")
    assert answer.status_code == 502
    assert (
        "Temporal refused the read" in answer.text
        and "ListWorkflowExecutions operation failed" in answer.text
    )


def test_a_run_whose_answer_this_npaflow_cannot_read_is_a_page_naming_the_skew_not_a_500() -> None:
    from starlette.testclient import TestClient

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads
    from npaflow.runtime.summary import RunSummary

    class Newer(RunReads):
        async def snapshot(self, run_id: str) -> object:
            return RunSummary.model_validate({"grown_since": 1})

    app = ui_app(Newer(client=None), UiSettings(namespace="default"))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as browser:
        page, live = browser.get("/runs/r1"), browser.get("/runs/r1/live")
    assert page.status_code == 502 and "The answer could not be read" in page.text
    assert "could not be read as RunSummary" in live.json()["error"]


def test_a_loop_back_decision_reads_as_the_spec_writes_it_while_the_ledger_keeps_the_canonical_word() -> None:
    record = DecisionRecord(state="gate", uri="file:///d.json", decision="loop_back_to_inner_loop")
    assert record.shown == "loop_back" and record.decision == "loop_back_to_inner_loop"
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    page = report_html(spec, failed_gate_ledger().model_copy(update={"decisions": [record]}), now=0)
    assert "<b>loop_back</b>" in page and "loop_back_to_inner_loop" not in page


class _OpenRun(RunReads):
    """A run still moving, with no worker answering: the page keeps its refresh script."""

    async def snapshot(self, run_id: str) -> Snapshot:
        return Snapshot(run_id, "e1", "RUNNING", "npaflow", problem="no worker polls task queue npaflow")


def test_every_page_server_answer_allows_only_its_own_script_and_loads_nothing_else() -> None:
    from starlette.testclient import TestClient

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.policy import script_source

    app = ui_app(_OpenRun(client=None), UiSettings(namespace="default", token="s3cret"))  # type: ignore[arg-type]
    with TestClient(app, raise_server_exceptions=False) as browser:
        refused = browser.get("/runs/x")
        page = browser.get("/runs/x", headers={"Authorization": "Bearer s3cret"})
    scripts = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    policy = page.headers["content-security-policy"]
    assert page.status_code == 200 and len(scripts) == 1
    assert f"script-src {script_source(scripts[0])};" in policy and "default-src 'none'" in policy
    assert refused.status_code == 401 and refused.headers["content-security-policy"] == policy
    assert refused.headers["x-content-type-options"] == "nosniff"
    assert refused.headers["referrer-policy"] == "no-referrer"


def test_the_report_file_forbids_any_script_to_a_browser_that_opens_it() -> None:
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    page = report_html(spec, failed_gate_ledger(), now=0)
    head = page.split("</head>", 1)[0]
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\';', head)
    assert "script-src" not in head


def test_the_report_says_beside_a_decision_that_no_predicate_can_match_it() -> None:
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    ledger = failed_gate_ledger()
    ledger.decisions = [DecisionRecord(state="route", uri="file:///d.json", decision="<promte>")]
    page = report_html(spec, ledger, now=0)
    assert (
        '<b>&lt;promte&gt;</b> <span class="error">(matches neither promote_checkpoint nor loop_back' in page
    )


def test_the_report_shows_a_control_character_a_job_wrote_as_its_escape_never_the_character() -> None:
    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    ledger = failed_gate_ledger()
    failed = ledger.waves[1].model_copy(update={"error": "exit 3: \x1b]0;PWNED\x07 \u202eevil"})
    page = report_html(spec, ledger.model_copy(update={"waves": [ledger.waves[0], failed]}), now=0)
    assert "\x1b" not in page and "\x07" not in page and "\u202e" not in page
    assert "exit 3: \\x1b]0;PWNED\\x07 \\u202eevil" in page


def test_a_state_the_cache_served_says_on_the_page_which_run_and_job_its_outputs_came_from() -> None:
    from npaflow.runtime.ledger import CachedStep

    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    ledger = failed_gate_ledger()
    hit = CachedStep(
        state="caption-batch", key="k", hit=True, source_run="r0", source_job="7", gpu_hours_saved=0.5
    )
    served = ledger.waves[0].model_copy(update={"job_id": "", "cache": [hit]})
    page = report_html(spec, ledger.model_copy(update={"waves": [served, ledger.waves[1]]}), now=0)
    assert 'data-state="caption-batch" data-phase="cached"' in page
    assert page.count("from the cache: run r0 job 7 (saved 0.5000 GPU-h)") == 2  # the node's title, the table


def test_the_gpu_hours_table_lists_the_costliest_state_first() -> None:
    from npaflow.runtime.usage import RunUsage, Usage

    spec = load_spec_from_path(EXAMPLES / "gate-loop.yaml", catalog=load_catalogs())
    by_state = {
        "caption-batch": Usage(gpu_hours=0.5),
        "score-batch": Usage(gpu_hours=2.0),
        "publish": Usage(),
    }
    ledger = failed_gate_ledger().model_copy(update={"usage": RunUsage(by_state=by_state)})
    table = report_html(spec, ledger, now=0).split("<th>on failed attempts</th>", 1)[1]
    assert table.index("score-batch") < table.index("caption-batch") < table.index("publish")


@pytest.mark.parametrize(
    ("span", "marks"),
    [
        (31, ["0 s", "10 s", "20 s", "30 s"]),
        (7.2, ["0 s", "2 s", "4 s", "6 s"]),
        (600, ["0 s", "2 m", "4 m", "6 m", "8 m", "10 m"]),
        (4000, ["0 s", "15 m", "30 m", "45 m", "1 h"]),
    ],
)
def test_the_timeline_axis_is_marked_at_round_steps(span: float, marks: list[str]) -> None:
    from npaflow.picture.timeline import _tick_text, ticks

    assert [_tick_text(at) for at in ticks(span)] == marks
