"""GPU quota pools (issue 31): waves acquire GPUs from a pool in Temporal before they launch."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from activities.backends.local import LocalBackend
from activities.backends.local.inventory import held_accelerators
from npaflow.quota import PoolConfig, PoolStatus, QuotaClaim
from npaflow.quota.messages import CONFIGURE_UPDATE, pool_workflow_id
from npaflow.runtime.contract import HELPER_DIVISION
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.pools import delete_pool, pool_status, set_pool
from tests.harness import (
    TEMPORAL_BIN,
    WORKER_ID,
    Harness,
    dev_server,
    polled,
    replaced_worker,
    start_worker_process,
)
from tests.helpers import COLD_WORKER_SECONDS, eventually, free_port
from tests.spec_factory import gpu_spec
from worker.main import workflow_runner
from workflows_def import PHASE_ATTRIBUTE, WORKFLOWS, NpaWorkflowRun
from workflows_def.quota.pool_workflow import LIVENESS

pytestmark = pytest.mark.integration


#: The pools this module's tests made, with the client that made them: deleted after each test.
MADE: list[tuple[Client, str]] = []


@pytest_asyncio.fixture(autouse=True)
async def pools_deleted_after() -> AsyncIterator[None]:
    """A pool outlives its test's worker: left behind, every later `quota list` waits on it."""
    yield
    while MADE:
        client, pool = MADE.pop()
        with contextlib.suppress(Exception):  # in use by a run a test left, or its server is gone
            await asyncio.wait_for(delete_pool(client, pool), 5)


async def new_pool(client: Client, harness: Harness, gpus: int, **weights: float) -> str:
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    await set_pool(client, pool, PoolConfig(gpus=gpus, weights=weights), harness.task_queue)
    MADE.append((client, pool))
    return pool


@dataclasses.dataclass
class Sample:
    """What the backend held at one moment: GPUs per team, from the jobs' own records."""

    at: float
    by_team: dict[str, float]


async def sample_backend(
    jobs_dir: Path, teams: dict[str, str], seen: list[Sample], stop: asyncio.Event
) -> None:
    """Every 0.5 s, the GPUs each team's jobs hold on the local backend (not what the pool says)."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        by_team: dict[str, float] = {}
        for job in await asyncio.to_thread(held_accelerators, jobs_dir):
            team = teams[job.run_id]
            by_team[team] = by_team.get(team, 0) + job.gpus
        seen.append(Sample(at=loop.time(), by_team=by_team))
        await asyncio.sleep(0.5)


def contended_shares(seen: list[Sample], since: float, teams: set[str]) -> dict[str, float]:
    """Each team's share of the GPU-hours held from `since` (every team asked) to the first team's end."""
    last_held = {team: max(i for i, s in enumerate(seen) if s.by_team.get(team)) for team in teams}
    window = [s for s in seen[: min(last_held.values())] if s.at >= since]
    totals = {team: sum(s.by_team.get(team, 0) for s in window) for team in teams}
    return {team: total / sum(totals.values()) for team, total in totals.items()}


async def test_three_teams_of_four_runs_never_hold_more_gpus_than_the_pool_and_equal_teams_share_evenly(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    seen: list[Sample] = []
    stop = asyncio.Event()
    teams = {f"q{team}-{i}": team for team in "abc" for i in range(4)}  # team a asks first, then b, then c
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 16, a=1, b=1, c=1)
        jobs_dir = local_harness.home / "local" / "jobs"
        sampler = asyncio.ensure_future(sample_backend(jobs_dir, teams, seen, stop))
        handles = [
            await local_harness.start(
                gpu_spec(tmp_path, "q", states=2), run_id=run_id, quota=QuotaClaim(pool=pool, team=team)
            )
            for run_id, team in teams.items()
        ]
        every_team_asked = asyncio.get_running_loop().time()
        outcomes = [await local_harness.finish(handle) for handle in handles]
        stop.set()
        await sampler
        final = await pool_status(env.client, pool)
    assert [o.status for o in outcomes] == ["succeeded"] * 12, [o.error for o in outcomes]
    assert max(sum(s.by_team.values()) for s in seen) == 16  # the pool was used to the full, never beyond
    shares = contended_shares(seen, every_team_asked, {"a", "b", "c"})
    for one, other in itertools.combinations("abc", 2):  # FIFO would give team a most of the start
        assert 0.4 <= shares[one] / (shares[one] + shares[other]) <= 0.6, shares
    assert final.in_use == 0 and not final.waiting
    print("GPU-hour shares while every team waited:", {t: round(v, 3) for t, v in shares.items()})


async def test_a_wave_bigger_than_the_pool_fails_with_the_arithmetic_and_launches_nothing(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 4)
        outcome = await local_harness.finish(
            await local_harness.start(gpu_spec(tmp_path, "big"), run_id="q-big", quota=QuotaClaim(pool=pool))
        )
    assert outcome.status == "failed"
    assert (
        f"quota pool {pool} refused wave" in outcome.error
        and "needs 8 GPUs and the pool holds 4" in outcome.error
    )


async def test_a_hand_sent_config_whose_accelerator_names_no_type_is_refused_and_the_pool_keeps_its_own(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 4)
        handle = env.client.get_workflow_handle(pool_workflow_id(pool))
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(CONFIGURE_UPDATE, PoolConfig(gpus=8, accelerator="H100:8"))
        status = await pool_status(env.client, pool)
    assert "carries a count: name the type only ('H100')" in str(refused.value.cause)
    assert (status.config.gpus, status.config.accelerator) == (4, "")


async def test_a_run_whose_pool_does_not_exist_does_not_launch_and_says_how_to_create_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        outcome = await local_harness.finish(
            await local_harness.start(
                gpu_spec(tmp_path, "nopool"), run_id="q-nopool", quota=QuotaClaim(pool="nope")
            )
        )
    assert outcome.status == "failed"
    assert "quota pool nope cannot be reached" in outcome.error and "npaflow quota set nope" in outcome.error


async def started_at(harness: Harness, handle: object) -> str:
    outcome = await harness.finish(handle)  # type: ignore[arg-type]
    assert outcome.status == "succeeded", outcome.error
    return outcome.ledger.waves[0].started_at


async def wait_for(client: Client, pool: str, check: object, timeout: float = 30.0) -> PoolStatus:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = await pool_status(client, pool)
        if check(status):  # type: ignore[operator]
            return status
        assert asyncio.get_running_loop().time() < deadline, status.model_dump_json(indent=2)
        await asyncio.sleep(0.2)


async def holder_and_waiter(
    client: Client,
    harness: Harness,
    pool: str,
    tmp_path: Path,
    holding: float,
    waiting: float,
    states: int = 1,
    until: Path | None = None,
) -> tuple[WorkflowHandle[Any, RunSummary], WorkflowHandle[Any, RunSummary]]:
    """A run that holds the whole 8-GPU pool for `holding` s (or until the file `until` exists),
    and one waiting in line behind it."""
    holding_spec = gpu_spec(tmp_path, "h", seconds=holding, until=until)
    holder = await harness.start(holding_spec, quota=QuotaClaim(pool=pool))
    await wait_for(client, pool, lambda s: s.in_use == 8)
    waiter = await harness.start(
        gpu_spec(tmp_path, "w", seconds=waiting, states=states), quota=QuotaClaim(pool=pool)
    )
    await wait_for(client, pool, lambda s: len(s.waiting) == 1)
    return holder, waiter


async def test_a_priority_1_run_asked_last_is_served_before_earlier_priority_3_waiters(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder = await local_harness.start(gpu_spec(tmp_path, "h", seconds=3), quota=QuotaClaim(pool=pool))
        await wait_for(env.client, pool, lambda s: s.in_use == 8)
        early = [
            await local_harness.start(gpu_spec(tmp_path, "e"), quota=QuotaClaim(pool=pool, priority=3))
            for _ in range(2)
        ]
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 2)
        urgent = await local_harness.start(gpu_spec(tmp_path, "u"), quota=QuotaClaim(pool=pool, priority=1))
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 3)
        line = [lease.request.priority for lease in (await pool_status(env.client, pool)).waiting]
        urgent_at = await started_at(local_harness, urgent)
        early_at = [await started_at(local_harness, handle) for handle in early]
        await local_harness.finish(holder)
    assert line == [1, 3, 3]
    assert all(urgent_at < at for at in early_at), (urgent_at, early_at)


async def test_a_pool_and_a_run_that_waited_for_quota_replay_their_histories_deterministically(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder, waiter = await holder_and_waiter(env.client, local_harness, pool, tmp_path, 2, 1.0, states=2)
        outcomes = [await local_harness.finish(handle) for handle in (holder, waiter)]
        histories = [
            await env.client.get_workflow_handle(workflow_id).fetch_history()
            for workflow_id in (pool_workflow_id(pool), waiter.id)
        ]
    assert [o.status for o in outcomes] == ["succeeded", "succeeded"]
    replayer = Replayer(workflows=WORKFLOWS, data_converter=DATA_CONVERTER, workflow_runner=workflow_runner())
    for history in histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, (history.workflow_id, result.replay_failure)


async def test_two_equal_teams_take_turns_even_when_one_asked_first(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        blocker = await local_harness.start(
            gpu_spec(tmp_path, "b", seconds=120), quota=QuotaClaim(pool=pool, team="c")
        )
        await wait_for(env.client, pool, lambda s: s.in_use == 8)
        runs = [
            await local_harness.start(gpu_spec(tmp_path, team), quota=QuotaClaim(pool=pool, team=team))
            for team in ("a", "a", "a", "a", "b", "b", "b", "b")
        ]
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 8)  # all in line, team a first
        await blocker.cancel()
        teams = ["a"] * 4 + ["b"] * 4
        starts = [await started_at(local_harness, handle) for handle in runs]
    first_two = [team for _, team in sorted(zip(starts, teams, strict=True))[:2]]
    assert first_two == ["a", "b"]  # first come first served alone would give team a both


async def test_a_cancelled_waiter_leaves_the_line_and_a_cancelled_holder_frees_its_gpus_within_seconds(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder, waiter = await holder_and_waiter(env.client, local_harness, pool, tmp_path, 60, 60)
        await waiter.cancel()
        await wait_for(env.client, pool, lambda s: not s.waiting, timeout=10)
        await holder.cancel()
        await wait_for(env.client, pool, lambda s: s.in_use == 0, timeout=10)
        ended = [await local_harness.finish(h) for h in (holder, waiter)]
    assert [o.status for o in ended] == ["CancelledError", "CancelledError"]


async def test_a_holder_terminated_with_temporal_workflow_terminate_gives_its_gpus_back_within_the_bound(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    local_harness.reconcile_seconds = 5  # its GPUs come back once the sweep cancelled its job
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder, waiter = await holder_and_waiter(env.client, local_harness, pool, tmp_path, 120, 1.0)
        terminate = await asyncio.create_subprocess_exec(  # as an operator does, behind npaflow's back
            str(TEMPORAL_BIN),
            "workflow",
            "terminate",
            "--workflow-id",
            holder.id,
            "--reason",
            "test: terminated while holding GPUs",
            "--address",
            env.client.service_client.config.target_host,
            stdout=asyncio.subprocess.DEVNULL,
        )
        assert await terminate.wait() == 0
        status = await wait_for(
            env.client, pool, lambda s: s.holders and s.holders[0].request.run_id == waiter.id, 40
        )
        outcome = await local_harness.finish(waiter)
    assert status.in_use == 8 and outcome.status == "succeeded"


async def test_a_worker_killed_while_its_wave_holds_gpus_neither_leaks_nor_doubles_them(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    task_queue = f"tq-qkill-{uuid.uuid4().hex[:6]}"
    first = start_worker_process(env, home, task_queue)
    pool = f"pool-{uuid.uuid4().hex[:6]}"
    await polled(env, task_queue)  # the CLI's configure gives an unpolled queue seconds, not minutes
    await asyncio.wait_for(set_pool(env.client, pool, PoolConfig(gpus=8), task_queue), COLD_WORKER_SECONDS)
    claim = QuotaClaim(pool=pool)

    async def start(name: str, seconds: float) -> WorkflowHandle[Any, RunSummary]:
        request = RunRequest(spec=gpu_spec(tmp_path, name, seconds=seconds), poll_seconds=0.2, quota=claim)
        return await env.client.start_workflow(
            NpaWorkflowRun.run, request, id=f"qk-{name}-{uuid.uuid4().hex[:4]}", task_queue=task_queue
        )

    holder = await start("holder", 4)
    await wait_for(env.client, pool, lambda s: s.in_use == 8, timeout=COLD_WORKER_SECONDS)
    waiter = await start("waiter", 0.5)
    await wait_for(env.client, pool, lambda s: len(s.waiting) == 1)
    async with replaced_worker(first, env, home, task_queue):
        held = await asyncio.wait_for(holder.result(), timeout=120)
        waited = await asyncio.wait_for(waiter.result(), timeout=120)
        final = await pool_status(env.client, pool)
    assert held.status == "succeeded" and waited.status == "succeeded"
    assert waited.waves[0].started_at >= held.waves[0].ended_at  # never both at once: no doubled GPUs
    assert final.in_use == 0 and not final.waiting  # and nothing leaked


async def persistent_server(db: Path, port: int) -> WorkflowEnvironment:
    """A dev server that keeps its state in `db`, so a restart on the same port keeps every workflow."""
    return await dev_server("--db-filename", str(db), port=port)


async def test_a_temporal_server_restart_loses_no_lease_and_invents_none(home: Path, tmp_path: Path) -> None:
    port, db = free_port(), tmp_path / "temporal.db"
    server = await persistent_server(db, port)
    harness = Harness(
        server.client, home, LocalBackend(home / "local", WORKER_ID), f"tq-{uuid.uuid4().hex[:6]}"
    )
    async with harness.worker():
        pool = await new_pool(server.client, harness, 8)
        holder, waiter = await holder_and_waiter(server.client, harness, pool, tmp_path, 6, 0.5)
        before = await pool_status(server.client, pool)
    await server.shutdown()
    runs = (holder, waiter)
    server = await persistent_server(db, port)
    harness = dataclasses.replace(harness, client=server.client)
    try:
        async with harness.worker():
            after = await pool_status(server.client, pool)
            handles = [server.client.get_workflow_handle(h.id, result_type=RunSummary) for h in runs]
            outcomes = [await harness.finish(handle) for handle in handles]
            final = await pool_status(server.client, pool)
    finally:
        await server.shutdown()
    assert [lease.request.run_id for lease in after.holders] == [holder.id]
    assert (
        [lease.request.run_id for lease in after.waiting]
        == [waiter.id]
        == [w.request.run_id for w in before.waiting]
    )
    assert [o.status for o in outcomes] == ["succeeded", "succeeded"], [o.error for o in outcomes]
    assert final.in_use == 0 and not final.waiting


async def test_a_pool_continues_as_new_when_its_history_grows_and_keeps_serving_every_wave(
    home: Path, tmp_path: Path
) -> None:
    server = await dev_server("--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=40")
    harness = Harness(
        server.client, home, LocalBackend(home / "local", WORKER_ID), f"tq-{uuid.uuid4().hex[:6]}"
    )
    try:
        async with harness.worker():
            pool = await new_pool(server.client, harness, 8)
            runs = [
                await harness.start(gpu_spec(tmp_path, "can", seconds=0.2), quota=QuotaClaim(pool=pool))
                for _ in range(6)
            ]
            outcomes = [await harness.finish(handle) for handle in runs]
            final = await pool_status(server.client, pool)
            query = (
                f"WorkflowId = '{pool_workflow_id(pool)}' AND TemporalNamespaceDivision = '{HELPER_DIVISION}'"
            )
            executions: list[object] = []
            for _ in range(50):  # visibility catches up
                executions = [e async for e in server.client.list_workflows(query)]
                if len(executions) >= 2:
                    break
                await asyncio.sleep(0.2)
    finally:
        await server.shutdown()
    assert [o.status for o in outcomes] == ["succeeded"] * 6, [o.error for o in outcomes]
    assert len(executions) >= 2  # it continued as new at least once: its history stays bounded
    assert final.in_use == 0 and not final.waiting


async def is_suspended(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).typed_search_attributes.get(PHASE_ATTRIBUTE) == "suspended"


async def test_a_suspended_run_gives_its_gpus_back_while_it_waits_and_asks_again_on_resume(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    fixed = tmp_path / "fixed"
    flaky = gpu_spec(tmp_path, "flaky").replace("sleep 1.0", f"test -e {fixed} || exit 3")
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        suspended = await local_harness.start(flaky, quota=QuotaClaim(pool=pool), on_failure="suspend")
        await eventually(lambda: is_suspended(suspended), timeout=60, what="the run suspended")
        assert (await pool_status(env.client, pool)).in_use == 0  # given back while it waits
        other = await local_harness.start(gpu_spec(tmp_path, "other"), quota=QuotaClaim(pool=pool))
        served = await local_harness.finish(other)  # the suspended run's GPUs served it meanwhile
        fixed.touch()
        await suspended.signal("resume")
        resumed = await local_harness.finish(suspended)
        final = await pool_status(env.client, pool)
    assert served.status == "succeeded" and resumed.status == "succeeded", (served.error, resumed.error)
    assert [(w.attempt, w.status.value) for w in resumed.summary.waves] == [(1, "failed"), (2, "succeeded")]
    assert final.in_use == 0 and not final.waiting


def _names_a_job(ledger: Path) -> bool:
    return ledger.exists() and re.search(r'"job_id": "[^"]+"', ledger.read_text()) is not None


async def terminate_behind_npaflow(env: WorkflowEnvironment, run_id: str) -> None:
    terminate = await asyncio.create_subprocess_exec(
        *(str(TEMPORAL_BIN), "workflow", "terminate", "--workflow-id", run_id, "--reason", "test"),
        *("--address", env.client.service_client.config.target_host),
        stdout=asyncio.subprocess.DEVNULL,
    )
    assert await terminate.wait() == 0


async def test_a_terminated_holders_live_job_and_its_waiter_never_hold_the_pools_gpus_at_once(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    """Pool of 8: the holder's 20 s job outlives the pool's 15 s check; its GPUs wait for the job's end."""
    local_harness.reconcile_seconds = 25.0  # the job ends by itself before any sweep could cancel it
    seen: list[Sample] = []
    stop = asyncio.Event()
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder, waiter = await holder_and_waiter(env.client, local_harness, pool, tmp_path, 20, 1.0)
        sampler = asyncio.ensure_future(
            sample_backend(
                local_harness.home / "local" / "jobs", {holder.id: "h", waiter.id: "w"}, seen, stop
            )
        )
        # Terminated before its ledger names the job is the next test's case (the ledger sweep
        # settles it from the launch receipt); this one's holder job outlives the pool's check.
        runtime = local_harness.home / "runs" / holder.id / "npa-workflow" / "runtime.json"
        await eventually(lambda: _names_a_job(runtime), timeout=60, what="the ledger names the job")
        await terminate_behind_npaflow(env, holder.id)
        outcome = await asyncio.wait_for(local_harness.finish(waiter), 180)
        stop.set()
        await sampler
    assert outcome.status == "succeeded", outcome.error
    assert any(s.by_team.get("h") for s in seen) and any(s.by_team.get("w") for s in seen)
    assert max(sum(s.by_team.values()) for s in seen) <= 8, [s.by_team for s in seen if len(s.by_team) > 1]


@contextlib.asynccontextmanager
async def swept_holder_and_waiter(
    env: WorkflowEnvironment, harness: Harness, tmp_path: Path
) -> AsyncIterator[tuple[WorkflowHandle[Any, RunSummary], WorkflowHandle[Any, RunSummary], Path]]:
    """A worker sweeping every 3 s, a run holding a whole 8-GPU pool until the yielded file
    exists, and one waiting behind it."""
    harness.reconcile_seconds = 3.0
    release = tmp_path / "release"
    async with harness.worker():
        pool = await new_pool(env.client, harness, 8)
        holder, waiter = await holder_and_waiter(env.client, harness, pool, tmp_path, 0, 1.0, until=release)
        yield holder, waiter, release


async def test_a_holder_closed_before_its_ledger_named_its_job_is_settled_from_its_launch_receipt(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    """Terminated between its launch and its first export, the holder left only its launch receipt;
    its job then ends on its own. The ledger sweep writes the ledger from the receipt (the job, its
    attempt, how it ended) and the pool, reading it, gives the GPUs to the waiter."""
    async with swept_holder_and_waiter(env, local_harness, tmp_path) as (holder, waiter, release):
        prefix = local_harness.home / "runs" / holder.id / "npa-workflow"
        await eventually(lambda: _names_a_job(prefix / "runtime.json"), timeout=60, what="the job launched")
        await holder.terminate("test: closed before its first export")
        for written in ("runtime.json", "manifest.json", "status.json"):  # as if it never exported
            (prefix / written).unlink(missing_ok=True)
        release.touch()
        outcome = await asyncio.wait_for(local_harness.finish(waiter), 180)
        ledger = json.loads((prefix / "runtime.json").read_text())
    assert list((prefix / "launches").glob("*.json"))
    assert outcome.status == "succeeded", outcome.error
    assert ledger["status"] == "terminated"
    assert [(w["attempt"], w["status"], bool(w["job_id"])) for w in ledger["waves"]] == [
        (1, "succeeded", True)
    ]


async def test_a_run_terminated_while_it_waited_for_gpus_gets_a_ledger_saying_it_launched_nothing(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    """The waiter never exported (a wait is published, not written): its history, which never
    scheduled a launch, is the evidence the ledger sweep writes its ledger from."""
    async with swept_holder_and_waiter(env, local_harness, tmp_path) as (holder, waiter, release):
        runtime = local_harness.home / "runs" / waiter.id / "npa-workflow" / "runtime.json"
        assert not runtime.exists()
        await waiter.terminate("test: tired of waiting")
        await eventually(runtime.exists, timeout=60, what="the waiter's ledger")
        release.touch()
        held = await asyncio.wait_for(local_harness.finish(holder), 180)
    ledger = json.loads(runtime.read_text())
    assert (ledger["status"], ledger["waves"]) == ("terminated", [])
    assert "terminated outside npaflow" in ledger["error"] and "before it launched any job" in ledger["error"]
    assert held.status == "succeeded"


async def test_quota_release_names_the_jobs_still_running_and_frees_the_gpus_only_with_force(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    local_harness.reconcile_seconds = 0  # no sweep: the terminated holder's job runs on
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder, waiter = await holder_and_waiter(env.client, local_harness, pool, tmp_path, 15, 1.0)
        await terminate_behind_npaflow(env, holder.id)
        address = ("--address", env.client.service_client.config.target_host)
        npaflow = str(TEMPORAL_BIN.parent / "npaflow")

        async def release(*flags: str) -> tuple[int, str]:
            process = await asyncio.create_subprocess_exec(
                npaflow, "quota", "release", pool, holder.id, *flags, *address,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            out, _ = await process.communicate()
            return process.returncode or 0, out.decode()

        refused = await release()
        still = await pool_status(env.client, pool)
        shown = await npaflow_cli(env, "quota", "status", pool)
        forced = await release("--force")
        outcome = await local_harness.finish(waiter)
        again = await release()
    assert refused[0] == 2 and "its jobs may still run" in refused[1] and "--force" in refused[1]
    assert "Traceback" not in refused[1]
    assert still.holders and still.holders[0].request.run_id == holder.id
    assert "the run terminated: its GPUs come back once its ledger shows every job ended" in shown
    assert f"npaflow quota release {pool} {holder.id}" in shown
    assert forced[0] == 0 and f"released 1 lease(s) of run {holder.id}" in forced[1]
    assert "released with --force while its ledger holds in flight" in forced[1]
    assert outcome.status == "succeeded"
    assert again[0] == 2 and "holds and waits for nothing" in again[1]


async def npaflow_cli(env: WorkflowEnvironment, *words: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(TEMPORAL_BIN.parent / "npaflow"), *words,
        "--address", env.client.service_client.config.target_host,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_a_run_that_waited_for_its_pool_shows_the_wait_while_it_waits_and_keeps_it_after(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        release = tmp_path / "release-the-pool"
        holder, waiter = await holder_and_waiter(
            env.client, local_harness, pool, tmp_path, 0, 0.5, until=release
        )
        waiting_since = time.monotonic()
        listed_waiting = json.loads(await npaflow_cli(env, "list", "--json"))
        status_waiting = await npaflow_cli(env, "status", waiter.id)
        await asyncio.sleep(max(0.0, 2.5 - (time.monotonic() - waiting_since)))  # a wait of seconds
        release.touch()  # the holder ends only once both commands saw the waiter waiting
        await local_harness.finish(holder)
        outcome = await local_harness.finish(waiter)
        status_after = await npaflow_cli(env, "status", waiter.id)
        status_json = json.loads(await npaflow_cli(env, "status", waiter.id, "--json"))
        listed_after = json.loads(await npaflow_cli(env, "list", "--json"))
    (row,) = [r for r in listed_waiting if r["run_id"] == waiter.id]
    assert row["phase"] == "waiting" and f"quota {pool} (8 GPUs, position 1)" == row["waiting_for"]
    assert (
        f"waiting: waiting for quota {pool}: needs 8 GPUs, 8 of 8 GPUs in use, position 1" in status_waiting
    )
    assert outcome.status == "succeeded" and outcome.ledger is not None
    (wait,) = outcome.ledger.quota_waits
    assert wait.pool == pool and wait.gpus == 8 and wait.granted_at and not wait.left_at
    assert wait.seconds >= 2, wait
    assert f"quota: waited {wait.seconds:.0f}s for quota {pool} (8 GPUs" in status_after
    (recorded,) = status_json["quota_waits"]
    assert recorded["granted_at"] == wait.granted_at and recorded["seconds"] == wait.seconds
    (after,) = [r for r in listed_after if r["run_id"] == waiter.id]
    assert after["waited_seconds"] == round(wait.seconds, 1)
    report = local_harness.home / "runs" / waiter.id / "npa-workflow" / "report.html"
    page = await eventually(lambda: report.exists() and report.read_text(), what="report.html")
    assert "<h3>Quota waits</h3>" in page and f"for quota {pool} (8 GPUs" in page


async def test_a_resumed_run_keeps_the_wait_its_earlier_execution_had_in_status_and_list(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    fixed, release = tmp_path / "fixed", tmp_path / "release-the-pool"
    failing_first = json.loads(gpu_spec(tmp_path, "w"))
    failing_first["states"]["s0"]["run"]["shell"] = f"test -e {fixed}"  # fails until the test fixes it
    spec = json.dumps(failing_first)
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder = await local_harness.start(
            gpu_spec(tmp_path, "h", until=release), quota=QuotaClaim(pool=pool)
        )
        await wait_for(env.client, pool, lambda s: s.in_use == 8)
        waiter = await local_harness.start(spec, quota=QuotaClaim(pool=pool))
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 1)
        await asyncio.sleep(1.5)  # a wait of seconds
        release.touch()
        await local_harness.finish(holder)
        failed = await local_harness.finish(waiter)
        fixed.touch()
        again = await local_harness.start(spec, run_id=waiter.id, quota=QuotaClaim(pool=pool))
        resumed = await local_harness.finish(again)
        status_json = json.loads(await npaflow_cli(env, "status", waiter.id, "--json"))
        listed = json.loads(await npaflow_cli(env, "list", "--json"))
    assert (failed.status, resumed.status) == ("failed", "succeeded")
    assert failed.ledger is not None
    (wait,) = failed.ledger.quota_waits
    assert wait.granted_at and wait.seconds >= 1
    assert [(w["id"], w["seconds"]) for w in status_json["quota_waits"]] == [(wait.id, wait.seconds)]
    (row,) = [r for r in listed if r["run_id"] == waiter.id]
    assert row["waited_seconds"] == round(wait.seconds, 1)


async def test_a_cancelled_holders_gpus_go_to_its_waiter_only_once_its_job_has_stopped(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    """Pool of 8: the holder's job takes 4 s to stop on SIGTERM (it checkpoints); the waiter waits."""
    seen: list[Sample] = []
    stop = asyncio.Event()
    spec = json.loads(gpu_spec(tmp_path, "h"))
    spec["states"]["s0"]["run"]["shell"] = "trap 'sleep 4; exit 143' TERM; while true; do sleep 0.2; done"
    async with local_harness.worker():
        pool = await new_pool(env.client, local_harness, 8)
        holder = await local_harness.start(json.dumps(spec), quota=QuotaClaim(pool=pool))
        await wait_for(env.client, pool, lambda s: s.in_use == 8)
        waiter = await local_harness.start(gpu_spec(tmp_path, "w"), quota=QuotaClaim(pool=pool))
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 1)
        teams = {holder.id: "h", waiter.id: "w"}
        sampler = asyncio.ensure_future(
            sample_backend(local_harness.home / "local" / "jobs", teams, seen, stop)
        )
        await eventually(lambda: any(s.by_team.get("h") for s in seen), timeout=60, what="the holder's job")
        await holder.signal("cancel", "checkpoint and stop")
        cancelled = await asyncio.wait_for(local_harness.finish(holder), 120)
        outcome = await asyncio.wait_for(local_harness.finish(waiter), 120)
        stop.set()
        await sampler
    assert cancelled.ledger is not None and cancelled.ledger.status.value == "cancelled"
    assert outcome.status == "succeeded", outcome.error
    assert any(s.by_team.get("w") for s in seen)
    assert max(sum(s.by_team.values()) for s in seen) <= 8, [s.by_team for s in seen if len(s.by_team) > 1]


async def test_a_cancelled_holder_whose_cancel_never_took_keeps_its_gpus_until_its_job_is_seen_to_end(
    env: WorkflowEnvironment, fake_sky_harness: Harness, fake_sky: Any, tmp_path: Path
) -> None:
    """Pool of 8: the holder's cancel is accepted and never acted on, so its job runs on, on its 8 GPUs."""
    from tests.integration.fake_skypilot import statuses
    from worker.ledger_sweep import LedgerSweep

    fake_sky.default = [statuses("PENDING"), statuses("RUNNING")]
    fake_sky.cancels_ignored = 1
    fake_sky_harness.reconcile_seconds = 0  # no orphan sweep: the job is left to end on its own
    options: dict[str, Any] = {"backend": "skypilot", "poll_seconds": 0.2}
    async with fake_sky_harness.worker():
        pool = await new_pool(env.client, fake_sky_harness, 8)
        holder = await fake_sky_harness.start(gpu_spec(tmp_path, "h"), quota=QuotaClaim(pool=pool), **options)
        await eventually(lambda: fake_sky.jobs and fake_sky.jobs[1].statuses == statuses("RUNNING"))
        fake_sky.default = [statuses("SUCCEEDED")]  # the waiter's job, once it launches
        waiter = await fake_sky_harness.start(gpu_spec(tmp_path, "w"), quota=QuotaClaim(pool=pool), **options)
        await wait_for(env.client, pool, lambda s: len(s.waiting) == 1)
        await holder.signal("cancel", "stop")
        cancelled = await asyncio.wait_for(fake_sky_harness.finish(holder), 120)
        await asyncio.sleep(LIVENESS.total_seconds() + 1)  # the pool has checked its closed holder
        held, launched = await pool_status(env.client, pool), sorted(fake_sky.jobs)
        fake_sky.jobs[1].script = [statuses("SUCCEEDED")]  # the job ends on its own
        sweep = LedgerSweep(fake_sky_harness.client, fake_sky_harness.context())
        await eventually(sweep.sweep, timeout=30, what="the ledger sweep saw the job end")
        outcome = await asyncio.wait_for(fake_sky_harness.finish(waiter), 120)
    assert cancelled.ledger is not None and cancelled.ledger.waves[0].cancellation.state.value == "requested"
    assert (held.in_use, len(held.waiting), launched) == (8, 1, [1])  # nothing launched beside its job
    assert outcome.status == "succeeded", outcome.error
    assert sorted(fake_sky.jobs) == [1, 2]
