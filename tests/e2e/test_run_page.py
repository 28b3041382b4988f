"""`npaflow ui`: the run page in a real headless Chromium against a real dev server and worker.

The page must move with the run (no reload), show loops, branches, batches and
failures, link logs that work, filter the runs list, and never ask anything of a
machine but this one. Screenshots go to $NPAFLOW_TEST_ARTIFACTS (default: tmp).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.request import urlopen

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from tests.browser import BrowserPage
from tests.e2e.test_cli_runs import npaflow_process
from tests.e2e.test_run_report import FAILING
from tests.harness import Harness, temporal_start
from tests.helpers import EXAMPLES, free_port
from tests.integration.fan_roots import Root
from tests.integration.test_fan_out import SEVEN, fan_spec, write_list

pytestmark = pytest.mark.e2e

#: The gate-loop example whose gate waits for `<root>/go` before it decides (the test says when).
WAIT_FOR_GO = """'while [ ! -e "{{config.root}}/go" ]; do sleep 0.2; done; exec python3 -c "$0" "$@"'"""
GATE_WAITS_FOR_GO = (
    (EXAMPLES / "gate-loop.yaml")
    .read_text()
    .replace("        - python3\n        - -c\n", f"        - sh\n        - -c\n        - {WAIT_FOR_GO}\n")
)


def shots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("NPAFLOW_TEST_ARTIFACTS", tmp_path))
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest_asyncio.fixture
async def page(tmp_path: Path) -> AsyncIterator[BrowserPage]:
    browser = await BrowserPage.open(tmp_path / "chromium")
    yield browser
    await browser.close()


def phase_of(state: str) -> str:
    return f"document.querySelector('[data-state=\"{state}\"]').dataset.phase"


#: The width of each timeline bar's solid part (from its first task's start): pale before it.
SOLID_WIDTHS = (
    "[...document.querySelectorAll('#timeline .bar')]"
    ".map(bar => parseFloat(bar.querySelectorAll('rect')[1].getAttribute('width')))"
)


async def test_a_gate_loop_page_turns_the_gate_from_running_to_succeeded_without_a_reload(
    local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    async with local_harness.worker():
        handle = await local_harness.start(
            GATE_WAITS_FOR_GO, run_id="page-gate", vars={"root": str(tmp_path)}
        )
        await page.goto(f"{ui}/runs/page-gate")
        await page.value("window.loadedOnce = true")
        await page.until(f"{phase_of('quality-gate')} === 'running'")
        assert await page.value(phase_of("publish")) == "pending"
        await page.until(f"{SOLID_WIDTHS}.some(width => width > 0)")  # started: solid while it runs
        (tmp_path / "go").touch()
        outcome = await local_harness.finish(handle)
        await page.until("document.getElementById('run-status').textContent === 'succeeded'")
        phases = {s: await page.value(phase_of(s)) for s in ("quality-gate", "route", "publish", "escalate")}
        caption = await page.value("document.querySelector('[data-state=\"refine\"] .caption').textContent")
        taken = await page.value("[...document.querySelectorAll('.edge.taken')].map(e => e.dataset.target)")
        solid = await page.value(SOLID_WIDTHS)
        await page.screenshot(shots(tmp_path) / "run-page-gate-loop.png")
    assert outcome.status == "succeeded"
    assert await page.value("window.loadedOnce") is True  # the page changed in place: never reloaded
    assert phases == {
        "quality-gate": "succeeded",
        "route": "succeeded",
        "publish": "succeeded",
        "escalate": "skipped",
    }
    assert "iteration 2" in caption  # the loop went round twice
    assert max(solid) >= 2  # a finished attempt is drawn solid from its task's start, as in report.html
    assert "publish" in taken and "escalate" not in taken  # the branch the decision took
    assert page.off_machine() == [], page.off_machine()


async def test_a_failed_runs_page_shows_the_failed_state_its_error_and_a_logs_link_that_works(
    local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    async with local_harness.worker():
        outcome = await local_harness.finish(await local_harness.start(FAILING, run_id="page-failing"))
        await page.goto(f"{ui}/runs/page-failing")
        failed = await page.value(phase_of("second"))
        hover = await page.value("document.querySelector('[data-state=\"second\"] title').textContent")
        link = await page.value("document.querySelector('#states a[href*=\"state=second\"]').href")
        await page.goto(link)
        logs = await page.value("document.body.innerText")
        await page.goto(f"{ui}/runs/page-failing")
        await page.screenshot(shots(tmp_path) / "run-page-failed.png")
    assert outcome.status == "failed" and failed == "failed"
    assert "second: failed" in hover and "exit" in hover.lower()
    assert "second - not fixed yet" in logs
    assert page.off_machine() == []


async def test_a_fan_out_page_shows_its_batches_and_the_runs_list_filters_by_phase(
    local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    sweep = (EXAMPLES / "parallel-sweep.yaml").read_text()
    async with local_harness.worker():
        for run_id, spec in (("page-sweep", sweep), ("page-broken", FAILING)):
            await local_harness.finish(
                await local_harness.start(spec, run_id=run_id, vars={"root": str(tmp_path)})
            )
        await page.goto(f"{ui}/runs/page-sweep")
        barriers = await page.value("document.querySelectorAll('#graph .barrier').length")
        members = "[...document.querySelectorAll('[data-state^=\"lr-\"]')]"
        columns = await page.value(
            f"new Set({members}.map(g => g.querySelector('rect').getAttribute('x'))).size"
        )
        phases = await page.value(f"{members}.map(g => g.dataset.phase)")
        await page.screenshot(shots(tmp_path) / "run-page-fan-out.png")
        await page.goto(f"{ui}/?phase=failed")
        failed_list = await page.value("[...document.querySelectorAll('#runs a')].map(a => a.textContent)")
        await page.goto(f"{ui}/")
        everything = await page.value("[...document.querySelectorAll('#runs a')].map(a => a.textContent)")
        await page.screenshot(shots(tmp_path) / "runs-list.png")
    assert barriers == 1 and columns == 2 and phases == ["succeeded"] * 4
    assert "page-broken" in failed_list and "page-sweep" not in failed_list
    assert {"page-broken", "page-sweep"} <= set(everything)
    assert page.off_machine() == []


async def test_the_page_says_plainly_when_no_worker_serves_the_run(
    env: WorkflowEnvironment, local_harness: Harness, ui: str
) -> None:
    await local_harness.start(FAILING, run_id="page-no-worker")  # no worker is running
    with urlopen(f"{ui}/runs/page-no-worker/live", timeout=30) as answer:
        live = json.loads(answer.read())
    assert "no worker polls task queue" in live["banner"] and live["ended"] is False
    assert 'data-state="second"' in live["sections"]["graph"]  # the spec is still drawn


def live_json(ui: str, run_id: str) -> dict:
    with urlopen(f"{ui}/runs/{run_id}/live", timeout=30) as answer:
        return dict(json.loads(answer.read()))


async def test_a_run_started_with_a_spec_uri_is_drawn_from_the_spec_it_loaded(
    env: WorkflowEnvironment, local_harness: Harness, ui: str, tmp_path: Path
) -> None:
    spec = tmp_path / "failing.yaml"
    spec.write_text(FAILING)
    async with local_harness.worker():
        temporal_start(env, local_harness, "page-by-uri", {"spec_uri": spec.as_uri()}, tmp_path)
        await local_harness.finish(env.client.get_workflow_handle("page-by-uri"))
        live = live_json(ui, "page-by-uri")
    assert 'data-state="second" data-phase="failed"' in live["sections"]["graph"]
    assert live["ended"] is True and live["banner"] == ""


async def test_a_run_refused_at_start_says_why_without_asking_a_worker(
    env: WorkflowEnvironment, local_harness: Harness, ui: str, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(
            env, local_harness, "page-refused", {"spec": FAILING, "vars": {"x": {"a": 1}}}, tmp_path
        )
        await local_harness.finish(env.client.get_workflow_handle("page-refused"))
        live = live_json(ui, "page-refused")
    assert (
        "refused before its code ran: invalid RunRequest: vars.x: Input should be a valid string"
        in live["banner"]
    )
    assert "vars.x" in live["banner"] and live["ended"] is True


async def test_a_page_served_beyond_loopback_needs_a_token(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    process = await npaflow_process(env, local_harness, "ui", "--host", "0.0.0.0", "--port", str(free_port()))
    _, err = await process.communicate()
    assert process.returncode == 2 and "give it a token" in err.decode() and "Traceback" not in err.decode()


async def test_a_page_whose_port_is_taken_says_so_in_one_line_and_never_claims_to_serve(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await npaflow_process(env, local_harness, "ui", "--port", str(port))
        out, err = await process.communicate()
    assert process.returncode == 2 and out.decode() == ""
    assert err.decode() == (
        f"npaflow: error: --port {port}: cannot listen on 127.0.0.1: Address already in use "
        "(hint: pick a free port with --port, and an address of this machine with --host)\n"
    )


async def test_a_waiting_runs_page_says_in_text_what_it_waits_for_and_draws_the_wait(
    env: WorkflowEnvironment, local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    from npaflow.quota import QuotaClaim
    from tests.integration.test_gpu_quotas import gpu_spec, new_pool, wait_for

    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 3)
        claim = QuotaClaim(pool=pool)
        release = tmp_path / "release-the-pool"  # the holder holds until the page was read
        holder = await local_harness.start(gpu_spec(tmp_path, "h", gpus=2, until=release), quota=claim)
        await wait_for(env.client, pool, lambda s: s.in_use == 2)
        waiter = await local_harness.start(gpu_spec(tmp_path, "w", seconds=0.5, gpus=2), quota=claim)
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 1)
        await page.goto(f"{ui}/runs/{waiter.id}")
        await page.until("document.getElementById('run-waiting') !== null")
        header = await page.value("document.getElementById('run-waiting').textContent")
        wait_bars = await page.value("document.querySelectorAll('#timeline .bar.phase-waiting').length")
        await page.screenshot(shots(tmp_path) / "run-page-waiting.png")
        await page.goto(f"{ui}/")
        listed = await page.value("document.getElementById('runs').textContent")
        release.touch()
        await local_harness.finish(holder)
        await local_harness.finish(waiter)
    assert f"waiting for quota {pool}: needs 2 GPUs, 2 of 3 GPUs in use, position 1" in header
    assert wait_bars == 1
    assert f"waiting for quota {pool} (2 GPUs, position 1)" in listed
    assert page.off_machine() == []


async def test_a_cached_runs_page_shows_its_states_cached_and_a_finished_run_solid_bars(
    local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    from tests.integration.test_stage_cache import chain_spec

    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="page-miss"))
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="page-hit"))
        await page.goto(f"{ui}/runs/page-miss")
        solid = await page.value(SOLID_WIDTHS)
        await page.screenshot(shots(tmp_path) / "run-page-finished-local.png")
        await page.goto(f"{ui}/runs/page-hit")
        phases = await page.value("[...document.querySelectorAll('[data-state]')].map(g => g.dataset.phase)")
        await page.screenshot(shots(tmp_path) / "run-page-cached.png")
    assert len(solid) == 6 and all(width > 0 for width in solid), solid
    assert phases and set(phases) == {"cached"}, phases
    assert page.off_machine() == []


async def test_a_for_each_group_on_the_run_page_says_its_member_count_and_names_its_failures(
    local_harness: Harness, ui: str, page: BrowserPage, tmp_path: Path
) -> None:
    root = Root.on("file", tmp_path, None)
    write_list(root, SEVEN, failing=("s4",))
    async with local_harness.worker():
        outcome = await local_harness.finish(
            await local_harness.start(fan_spec(root, min_success=0.8), run_id="page-fan")
        )
        await page.goto(f"{ui}/runs/page-fan")
        caption = await page.value("document.querySelector('[data-state=\"work\"]').textContent")
        hover = await page.value("document.querySelector('[data-state=\"work\"] title').textContent")
        titles = await page.value("[...document.querySelectorAll('title')].map(t => t.textContent)")
        await page.screenshot(shots(tmp_path) / "run-page-for-each.png")
    assert outcome.status == "succeeded", outcome.error
    assert "forEach s" in caption and "6/7 ok · 1 failed" in caption and "iteration" not in caption, caption
    assert "6 of 7 members succeeded (minSuccess 0.8)" in hover, hover
    assert "failed: s4;" in hover, hover
    assert any(title.startswith("shard ×3 [s3, s4, s5] · attempt 1") for title in titles), titles
    assert page.off_machine() == []
