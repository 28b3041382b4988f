"""Runs of any width finish, with every payload under 256 KiB, and their views agree (issue 63).

Each run is read back the ways people read it: `npaflow status --json`, `npaflow
list --json`, its ledger, and (for the 1,000-member group) the run page. The
payload audit (tests/payload_audit.py) checks every payload of every run here.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import WorkflowHandle, WorkflowQueryFailedError
from temporalio.testing import WorkflowEnvironment

from activities.backends.local import LocalBackend
from npaflow.runtime.contract import REPORT_FILE, STATUS_QUERY, ledger_file_uri
from npaflow.runtime.payload_limits import TEMPORAL_PAYLOAD_WARNING
from npaflow.runtime.usage import gpu_hours_text
from npaflow.runtime.vocabulary import WaveStatus
from tests.e2e.test_cli_runs import npaflow
from tests.harness import WORKER_ID, Harness, RunOutcome
from tests.helpers import eventually
from tests.integration.fake_backend import FakeBackend
from tests.payload_audit import oversized_payloads
from tests.spec_factory import wide_group

pytestmark = pytest.mark.e2e


async def run_by_uri(harness: Harness, spec: str, where: Path, run_id: str) -> RunOutcome:
    """Start a run that reads its spec by URI (as `submit` does past its inline limit) and finish it."""
    path = where / f"{run_id}.json"
    path.write_text(spec)
    handle = await harness.start("", run_id=run_id, spec_uri=path.as_uri(), poll_seconds=0.05)
    return await harness.finish(handle)


async def executions(harness: Harness, handle: WorkflowHandle) -> int:
    return len([run async for run in harness.client.list_workflows(f"WorkflowId = '{handle.id}'")])


async def status_pages(harness: Harness, run_id: str) -> list[int]:
    """The size of each raw page of the ended run's status query, as `npaflow status` pages a live run."""
    handle = harness.client.get_workflow_handle(run_id)
    sizes, before = [], -1
    while True:
        raw = await replayed_query(handle, before)
        sizes.append(len(json.dumps(raw)))
        if not raw.get("waves_start") or not raw.get("waves"):
            return sizes
        before = raw["waves_start"]


async def replayed_query(handle: WorkflowHandle, before: int, tries: int = 3) -> dict:
    """One raw page of an ended run, asked again when its replay lost to the SDK's 2 s deadlock detector.

    An ended run's query replays its last execution on a worker (npaflow's own readers read its
    ledger instead); on a host loaded by two other test processes that replay can pass 2 s.
    """
    for attempt in range(1, tries + 1):
        try:
            return dict(
                await handle.query(
                    STATUS_QUERY, args=["", before], result_type=dict, rpc_timeout=timedelta(seconds=60)
                )
            )
        except WorkflowQueryFailedError as error:
            if "TMPRL1101" not in str(error) or attempt == tries:
                raise
    raise AssertionError("unreachable")


def read_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=120) as answer:
        return dict(json.loads(answer.read()))


async def views_agree(
    env: WorkflowEnvironment, harness: Harness, outcome: RunOutcome, ui: str = "", *, raw_pages: bool = True
) -> tuple[dict, dict]:
    """`status --json`, `list --json` and the run page say what the ledger says; the report and page.

    `raw_pages` False: the ended run's raw status query is not asked. For a run that continued as
    new, that query replays thousands of members on the test's in-process worker; on a host loaded
    by two other test processes the replay passed the SDK's 2 s deadlock detector, after which the
    worker never finished shutting down (the suite hung twice). npaflow's own readers read an ended
    run's ledger instead; each page's bound at 2,000 waves and 5,000 members is
    tests/unit/test_status_pages.py's.
    """
    assert outcome.ledger is not None
    run_id = outcome.handle.id
    status = await npaflow(env, harness, "status", run_id, "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    listed = await npaflow(env, harness, "list", "--since", "1h", "--limit", "500", "--json")
    (row,) = [row for row in json.loads(listed.stdout) if row["run_id"] == run_id]
    ledger = outcome.ledger
    assert report["phase"] == row["phase"] == ledger.status.value == "succeeded"
    assert len(report["waves"]) == len(ledger.waves)
    assert outcome.summary is not None  # and its report was drawn beside the ledger, however wide
    report_page = Path(ledger_file_uri(outcome.summary.run_prefix_uri, REPORT_FILE).removeprefix("file://"))
    assert report_page.stat().st_size > 0
    assert report["usage"]["gpu_hours"] == row["gpu_hours"] == ledger.usage.gpu_hours
    if raw_pages:
        pages = await status_pages(harness, run_id)
        assert all(size < TEMPORAL_PAYLOAD_WARNING for size in pages), pages  # each query answer bounded
    live: dict = {}
    if ui:  # off the event loop: the in-process worker reads the ended run's ledger for the page
        live = await asyncio.to_thread(read_json, f"{ui}/runs/{run_id}/live")
        assert live["ended"] is True
        assert f'<b id="run-status">{ledger.status.value}</b>' in live["sections"]["meta"]
        assert f"{gpu_hours_text(ledger.usage.gpu_hours)} GPU-hours" in live["sections"]["meta"]
    return report, live


async def wide_run(
    env: WorkflowEnvironment, harness: Harness, ui: str, root: Path, members: int, *, outputs: bool = True
) -> tuple[RunOutcome, dict, dict]:
    """A group of `members` run to its end, and what status, list and the page said of it."""
    async with harness.worker():
        spec = wide_group(root, members, outputs=outputs)
        outcome = await run_by_uri(harness, spec, root, f"wide-{members}")
        assert outcome.status == "succeeded", outcome.error
        continued = await executions(harness, outcome.handle) > 1
        report, live = await views_agree(env, harness, outcome, ui, raw_pages=not continued)
    return outcome, report, live


async def test_a_1000_member_group_with_long_names_params_and_outputs_completes_and_every_view_agrees(
    env: WorkflowEnvironment,
    local_harness: Harness,
    ui: str,
    tmp_path: Path,
) -> None:
    outcome, report, live = await wide_run(env, local_harness, ui, tmp_path, 1000)
    assert outcome.summary is not None and outcome.summary.wave_count == 21
    assert outcome.summary.waves_omitted > 0 and outcome.summary.states_omitted > 0
    assert len(report["waves"]) == 21
    graph = live["sections"]["graph"]
    assert 'data-state="shard-00999-with-a-rather-long-descriptive-member-name"' in graph  # drawn from parts
    assert [len(f.read_text().splitlines()) for f in tmp_path.glob("wide-1000-shard-*.txt")] == [1] * 1000


async def test_a_5000_member_group_completes_continuing_as_new_between_batches(
    env: WorkflowEnvironment, harness: Harness, fake: FakeBackend, ui: str, tmp_path: Path
) -> None:
    """On the backend double (5,000 local processes cost a minute; the 1,000 above run them)."""
    fake.poll_interval = 0.005  # it answers at once: no 50 ms tick per batch
    outcome, _, _ = await wide_run(env, harness, ui, tmp_path, 5000, outputs=False)
    assert outcome.ledger is not None and len(outcome.ledger.waves) == 101
    assert all(wave.attempt == 1 for wave in outcome.ledger.waves)
    launched = [state for launch in fake.launches for state in launch.states]
    assert len(launched) == len(set(launched)) == 5001  # every member once, then `done`
    assert await executions(harness, outcome.handle) > 1  # it continued as new between batches


async def test_a_group_loaded_in_parts_that_continues_as_new_mid_group_launches_each_batch_once(
    short_histories: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    harness = Harness(short_histories.client, home, LocalBackend(home, WORKER_ID), "tq-mid-group")
    async with harness.worker():
        outcome = await run_by_uri(harness, wide_group(tmp_path, 200, batch=40), tmp_path, "mid-group")
        assert outcome.status == "succeeded", outcome.error
        report, _ = await views_agree(short_histories, harness, outcome)
    assert await executions(harness, outcome.handle) > 1
    assert [wave["status"] for wave in report["waves"]] == [WaveStatus.SUCCEEDED.value] * 6  # 5 batches, done
    assert outcome.ledger is not None and all(wave.attempt == 1 for wave in outcome.ledger.waves)
    assert [len(f.read_text().splitlines()) for f in tmp_path.glob("mid-group-shard-*.txt")] == [1] * 200
    assert not await oversized_payloads(short_histories.client, since)


@pytest.mark.large_payloads
async def test_the_payload_audit_names_a_payload_past_the_warning(env: WorkflowEnvironment) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    big = "x" * (TEMPORAL_PAYLOAD_WARNING + 1024)
    await env.client.start_workflow("no-such-workflow", big, id="audit-big", task_queue="tq-nobody")

    async def named() -> list[str]:  # visibility lists a new run a moment after it started
        found = await oversized_payloads(env.client, since)
        return [
            line
            for line in found
            if line.startswith("audit-big event 1 (EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)")
        ]

    try:
        assert await eventually(named, timeout=30, interval=0.2, what="the audit names the big input")
    finally:
        await env.client.get_workflow_handle("audit-big").terminate()
