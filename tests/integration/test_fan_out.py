"""Fan-out from data end to end: a stage writes a list, the group runs one member per item.

Each member appends its item's id to a launch log outside its outputs, so the
log says which members really ran; a member fails while its id is in `fail`.
The scenarios the issue names run on a file root and on an S3 root (SeaweedFS).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from activities.backends.local import LocalBackend
from activities.storage import S3Storage, StorageRouter
from npaflow.cli.run_handlers import status_once
from npaflow.cli.status_text import status_text
from npaflow.fanout import MembersDocument, MemberStatus, member_key
from npaflow.picture.blocks import spec_blocks
from npaflow.picture.node_states import node_views
from npaflow.runtime.ledger.projection import manifest_steps
from npaflow.runtime.request import BackendName
from npaflow.runtime.summary import StatusReport
from npaflow.runtime.vocabulary import StepStatus, WaveStatus
from npaflow.spec import load_spec_from_str
from npaflow.temporal.data_converter import DATA_CONVERTER
from tests.e2e.test_cli_runs import npaflow
from tests.harness import WORKER_ID, Harness, RunOutcome, replaced_worker, start_worker_process
from tests.helpers import CATALOG, eventually
from tests.integration.fake_skypilot import FakeSkyPilotApi
from tests.integration.fan_roots import Root
from tests.integration.test_crash_and_replay import patches_and_activities
from tests.s3_server import CREDENTIALS
from worker.main import workflow_runner
from workflows_def import NpaWorkflowRun
from workflows_def.patches import MEMBER_OUTPUTS, MEMBER_RETRIES

pytestmark = pytest.mark.integration

SEVEN = [{"id": f"s{n}", "rows": 10 * n} for n in range(7)]


@pytest.fixture(params=["file", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Root:
    server = request.getfixturevalue("s3_server") if request.param == "s3" else None
    return Root.on(request.param, tmp_path, server)


@pytest.fixture
def file_root(tmp_path: Path) -> Root:
    return Root.on("file", tmp_path, None)


@pytest.fixture
def fan_harness(root: Root, env: WorkflowEnvironment, home: Path, local_harness: Harness) -> Harness:
    """Local jobs; on S3, they get the bucket's credentials and the worker reads the bucket."""
    if root.server is None:
        return local_harness
    backend = LocalBackend(home, WORKER_ID, job_env=tuple(CREDENTIALS))
    storage = StorageRouter(S3Storage(root.server.endpoint))
    return Harness(env.client, home, backend, f"tq-{uuid.uuid4().hex[:8]}", storage)


def fan_spec(
    root: Root, *, min_success: float = 1.0, cache: bool = False, concurrency: int = 3, pause: float = 0
) -> str:
    """split copies the list into the run; `work` fans out over it; `done` copies members.json.

    A failing member fails at once (one listed in `once` fails its first run only); the
    others take `pause` seconds first; a muted member exits 0 without writing its output.
    """
    local, tool, base = root.local, root.tool, root.base
    member = (
        "echo {{s.id}} >> " + f"{local}/launches.log && "
        "! grep -qx {{s.id}} " + f"{local}/fail && sleep {pause} && "
        "{ ! grep -qx {{s.id}} " + f"{local}/once || "
        "{ sed -i '/^{{s.id}}$/d' " + f"{local}/once; false; }}; }} && "
        "{ grep -qx {{s.id}} " + f"{local}/mute || "
        f"{tool} put {base}/" + "{{run.id}}/out-{{s.id}}.txt rows={{config.rows}}; }"
    )
    return f"""apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {{name: fan}}
{root.config}
initial: split
states:
  split:
    run: {{shell: "{tool} copy {root.uri(root.list_key)} {base}/{{{{run.id}}}}/items.json"}}
    outputs: [{{uri: "{base}/{{{{run.id}}}}/items.json", schema: items}}]
    next: work
  work:
    parallel: [shard]
    forEach: {{items: "{base}/{{{{run.id}}}}/items.json", as: s, max: 8, minSuccess: {min_success}}}
    maxConcurrency: {concurrency}
    next: done
  shard:
    run: {{shell: "{member}"}}
    params: {{rows: "{{{{s.rows}}}}"}}
    outputs: [{{uri: "{base}/{{{{run.id}}}}/out-{{{{s.id}}}}.txt", schema: shard}}]
    cache: {str(cache).lower()}
  done:
    terminal: true
    run: {{shell: "{tool} copy {{{{state.work.uri}}}} {base}/{{{{run.id}}}}/members-seen.json"}}
"""


def write_list(
    root: Root,
    items: list[object] | str,
    *,
    failing: tuple[str, ...] = (),
    muted: tuple[str, ...] = (),
    once: tuple[str, ...] = (),
) -> None:
    root.write(root.list_key, items if isinstance(items, str) else json.dumps(items))
    (root.local / "fail").write_text("".join(f"{name}\n" for name in failing))
    (root.local / "mute").write_text("".join(f"{name}\n" for name in muted))
    (root.local / "once").write_text("".join(f"{name}\n" for name in once))


def launches(root: Root) -> list[str]:
    log = root.local / "launches.log"
    lines = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def members_of(outcome: RunOutcome, root: Root) -> MembersDocument:
    assert outcome.ledger is not None
    (record,) = outcome.ledger.fan_outs.values()
    return MembersDocument.model_validate_json(root.read_uri(record.members_uri))


async def test_a_seven_item_list_runs_seven_members_with_their_own_params_and_outputs(
    fan_harness: Harness, root: Root
) -> None:
    write_list(root, SEVEN)
    run_id = root.run_id("fan-seven")
    outcome = await fan_harness.run(fan_spec(root), run_id=run_id)
    assert outcome.status == "succeeded", outcome.error
    assert sorted(launches(root)) == [item["id"] for item in SEVEN]
    for item in SEVEN:
        assert root.read(f"{run_id}/out-{item['id']}.txt") == f"rows={item['rows']}"
    members = members_of(outcome, root)
    assert [m.item for m in members.members] == SEVEN and members.succeeded == 7
    assert json.loads(root.read(f"{run_id}/members-seen.json"))["succeeded"] == 7
    (record,) = outcome.ledger.fan_outs.values()
    assert record.count == 7 and len(record.digest) == 64 and record.ended
    assert record.copy_uri.startswith(root.base) and record.members_uri.startswith(root.base)


async def test_batches_of_max_concurrency_carry_their_members_item_keys(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN)
    outcome = await local_harness.run(fan_spec(file_root), run_id="fan-keys")
    assert outcome.ledger is not None
    batches = [w for w in outcome.ledger.waves if w.key.group == "work"]
    assert [len(w.key.members) for w in batches] == [3, 3, 1]
    keys = [m.item for w in batches for m in w.key.members]
    assert sorted(keys) == sorted(m.key for m in members_of(outcome, file_root).members)
    assert all(
        task.task_name == f"shard-{key}"
        for w in batches
        for task, key in zip(w.tasks, [m.item for m in w.key.members], strict=True)
    )


async def test_a_reordered_list_on_a_rerun_with_cache_launches_nothing(
    fan_harness: Harness, root: Root
) -> None:
    write_list(root, SEVEN)
    async with fan_harness.worker():
        first = await fan_harness.finish(await fan_harness.start(fan_spec(root, cache=True)))
        assert first.status == "succeeded", first.error
        assert len(launches(root)) == 7
        write_list(root, list(reversed(SEVEN)))
        second = await fan_harness.finish(await fan_harness.start(fan_spec(root, cache=True)))
    assert second.status == "succeeded", second.error
    assert launches(root) == []
    keys = [{m.key for m in members_of(outcome, root).members} for outcome in (first, second)]
    assert keys[0] == keys[1]


async def test_an_item_added_on_a_rerun_with_cache_launches_only_that_item(
    fan_harness: Harness, root: Root
) -> None:
    write_list(root, SEVEN)
    async with fan_harness.worker():
        first = await fan_harness.finish(await fan_harness.start(fan_spec(root, cache=True)))
        assert first.status == "succeeded", first.error
        launches(root)
        write_list(root, [*SEVEN, {"id": "s7", "rows": 70}])
        second = await fan_harness.finish(await fan_harness.start(fan_spec(root, cache=True)))
    assert second.status == "succeeded", second.error
    assert launches(root) == ["s7"]


async def test_one_failed_member_under_min_success_0_8_lets_the_run_succeed_and_lists_it(
    fan_harness: Harness, root: Root
) -> None:
    write_list(root, SEVEN, failing=("s4",))
    outcome = await fan_harness.run(fan_spec(root, min_success=0.8), run_id=root.run_id("fan-partial"))
    assert outcome.status == "succeeded", outcome.error
    members = members_of(outcome, root)
    assert [m.item["id"] for m in members.members if m.status is MemberStatus.FAILED] == ["s4"]  # type: ignore[index]
    (record,) = outcome.ledger.fan_outs.values()
    assert record.failed == [m.key for m in members.members if m.status is MemberStatus.FAILED]
    assert (record.succeeded, record.count) == (6, 7)


async def test_a_member_failing_first_stops_none_of_its_batch_mates(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN, failing=("s4",))
    outcome = await local_harness.run(fan_spec(file_root, min_success=0.8, pause=1), run_id="fan-mates")
    assert outcome.status == "succeeded", outcome.error
    statuses = {m.item["id"]: m.status for m in members_of(outcome, file_root).members}  # type: ignore[index]
    assert [name for name, status in statuses.items() if status is not MemberStatus.SUCCEEDED] == ["s4"]


async def replayed_patches(outcome: RunOutcome) -> list[str]:
    """The run's history replays on this code; the patches it recorded."""
    history = await outcome.handle.fetch_history()
    runner = workflow_runner()
    replayer = Replayer(workflows=[NpaWorkflowRun], data_converter=DATA_CONVERTER, workflow_runner=runner)
    assert (await replayer.replay_workflow(history, raise_on_replay_failure=False)).replay_failure is None
    return patches_and_activities(history)[0]


def failed_ids(outcome: RunOutcome, root: Root) -> list[str]:
    members = members_of(outcome, root).members
    return [m.item["id"] for m in members if m.status is MemberStatus.FAILED]  # type: ignore[index]


async def test_a_member_whose_job_failed_beside_it_counts_as_succeeded_only_with_its_output(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN, failing=("s1",), muted=("s0",))  # one batch: s0, s1, s2
    outcome = await local_harness.run(fan_spec(file_root, min_success=0.5), run_id="fan-mute-failed")
    assert outcome.status == "succeeded", outcome.error
    assert failed_ids(outcome, file_root) == ["s0", "s1"]
    (batch,) = [w for w in outcome.ledger.waves if w.status is WaveStatus.FAILED]  # type: ignore[union-attr]
    assert any(uri.endswith("/out-s0.txt") for uri in batch.unconfirmed_outputs)
    assert "declared output(s) not found after it" in batch.error
    assert batch.error.startswith("state shard ×3 [s0, s1, s2]: job "), batch.error  # by items, once
    manifest = {step.item_label: step.status for step in manifest_steps(batch)}
    assert manifest == {"s0": StepStatus.FAILED, "s1": StepStatus.FAILED, "s2": StepStatus.OK}
    assert MEMBER_OUTPUTS in await replayed_patches(outcome)


async def test_a_member_that_left_its_output_missing_fails_alone_not_its_whole_batch(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN, muted=("s4",))  # the second batch: s3, s4, s5
    outcome = await local_harness.run(fan_spec(file_root, min_success=0.8), run_id="fan-mute-alone")
    assert outcome.status == "succeeded", outcome.error
    assert failed_ids(outcome, file_root) == ["s4"]


async def test_a_retry_of_a_batch_relaunches_only_its_members_that_did_not_succeed(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN[:3], once=("s1",))  # one batch: s0, s1, s2
    outcome = await local_harness.run(fan_spec(file_root), run_id="fan-retry", retries=1)
    assert outcome.status == "succeeded", outcome.error
    assert sorted(launches(file_root)) == ["s0", "s1", "s1", "s2"]
    assert outcome.ledger is not None
    retry = next(w for w in outcome.ledger.waves if w.items and w.attempt == 2)
    first = next(w for w in outcome.ledger.waves if w.key == retry.key and w.attempt == 1)
    assert [(m.attempt, m.job_id) for m in retry.carried] == [(1, first.job_id)] * 2
    made = {(s.item_label, s.job_id, s.attempt) for s in manifest_steps(retry)}
    assert made == {("s0", first.job_id, 1), ("s1", retry.job_id, 2), ("s2", first.job_id, 1)}
    assert MEMBER_RETRIES in await replayed_patches(outcome)
    assert outcome.summary is not None
    report = StatusReport.of(outcome.summary.status_view(BackendName.LOCAL), "COMPLETED")
    told = f"attempt 2: succeeded, job {retry.job_id} on worker w1 (SUCCEEDED) (s0, s2 done before)"
    assert f"  shard ×3 [s0, s1, s2] {told}" in status_text(report).splitlines()


async def test_a_retried_batch_stores_each_member_s_cache_entry_with_the_job_that_ran_it(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN[:3], once=("s1",))
    spec = fan_spec(file_root, cache=True)
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(spec, retries=1))
        assert first.status == "succeeded", first.error
        assert first.ledger is not None
        jobs = {(w.attempt, w.job_id) for w in first.ledger.waves if w.items}
        second = await local_harness.finish(await local_harness.start(spec))
    assert second.status == "succeeded", second.error
    assert second.ledger is not None
    (served,) = [w for w in second.ledger.waves if w.items]
    labels = {step.item: label for step, label in zip(manifest_steps(served), served.items, strict=True)}
    source = {labels[step.item]: step.source_job for step in served.cache if step.hit}
    by_attempt = dict(jobs)
    assert source == {"s0": by_attempt[1], "s1": by_attempt[2], "s2": by_attempt[1]}


async def test_status_the_summary_and_the_run_page_name_a_fan_out_s_failed_members(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN, failing=("s4",))
    outcome = await local_harness.run(fan_spec(file_root, min_success=0.8), run_id="fan-told")
    assert outcome.summary is not None and outcome.ledger is not None
    failed = member_key(SEVEN[4])
    said = "fan-out work: 6 of 7 members succeeded (minSuccess 0.8); failed: s4; members: file://"
    assert any(line.startswith(said) for line in outcome.summary.text_lines())
    view = outcome.summary.status_view(BackendName.LOCAL)
    assert [(record.failed, record.failed_items) for record in view.fan_outs] == [([failed], ["s4"])]
    spec = load_spec_from_str(fan_spec(file_root, min_success=0.8), "fan.yaml", catalog=CATALOG)
    blocks = spec_blocks(spec)
    assert any(block.caption().startswith("work: forEach s") for top in blocks for block in top.walk())
    assert node_views(blocks, outcome.ledger)["work"].detail.startswith(said)


async def test_each_member_is_named_by_its_item_in_the_ledger_the_manifest_and_status(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN)
    outcome = await local_harness.run(fan_spec(file_root), run_id="fan-named")
    assert outcome.summary is not None and outcome.ledger is not None
    batches = [w for w in outcome.ledger.waves if w.key.group == "work"]
    assert [w.items for w in batches] == [["s0", "s1", "s2"], ["s3", "s4", "s5"], ["s6"]]
    steps = [step for w in batches for step in manifest_steps(w)]
    assert [(step.item, step.item_label) for step in steps] == [(member_key(i), i["id"]) for i in SEVEN]
    report = StatusReport.of(outcome.summary.status_view(BackendName.LOCAL), "COMPLETED")
    lines = status_text(report).splitlines()
    assert "  shard ×3 [s0, s1, s2] attempt 1: succeeded, job w1-2 on worker w1 (SUCCEEDED)" in lines
    assert all(w.items == [] for w in outcome.ledger.waves if w.key.group != "work")


async def test_status_counts_a_running_fan_outs_members_so_far(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, SEVEN, failing=("s1",))
    async with local_harness.worker():
        handle = await local_harness.start(
            fan_spec(file_root, min_success=0.5, pause=2), run_id="fan-counted"
        )

        async def counted() -> str | None:
            text = await status_once(handle)
            return text if "so far)" in text else None

        running = await eventually(counted, timeout=60, what="status counting the members so far")
        outcome = await local_harness.finish(handle)
    (line,) = [line for line in running.splitlines() if line.startswith("fan-out work: 7 items from ")]
    assert line.endswith("(running: 2 of 7 succeeded, 1 failed so far)") or line.endswith(
        "(running: 4 of 7 succeeded, 1 failed so far)"
    ), line
    assert outcome.status == "succeeded"
    assert any(
        line.startswith("fan-out work: 6 of 7 members succeeded") for line in outcome.summary.text_lines()
    )


async def failed_on_s4(harness: Harness, root: Root, run_id: str) -> RunOutcome:
    """A run of the seven items, all in one batch, whose member s4 fails (minSuccess 1.0)."""
    write_list(root, SEVEN, failing=("s4",))
    failed = await harness.finish(await harness.start(fan_spec(root, concurrency=8), run_id=run_id))
    assert failed.status == "failed"
    assert sorted(launches(root)) == sorted(item["id"] for item in SEVEN)
    return failed


async def test_one_failed_member_under_min_success_1_fails_the_run_naming_it_and_resume_relaunches_only_it(
    fan_harness: Harness, root: Root
) -> None:
    run_id = root.run_id("fan-resume")
    async with fan_harness.worker():
        failed = await failed_on_s4(fan_harness, root, run_id)
        assert "6 of 7 shard members succeeded" in failed.error and "s4" in failed.error, failed.error
        assert "; the first failed batch: batch 1 of 1: job " in failed.error, (
            failed.error
        )  # why, not only who
        write_list(root, SEVEN)  # the fix
        spec = fan_spec(root, concurrency=8)
        resumed = await fan_harness.finish(await fan_harness.start(spec, run_id=run_id))
    assert resumed.status == "succeeded", resumed.error
    assert launches(root) == ["s4"]
    statuses = {m.item["id"]: m.status for m in members_of(resumed, root).members}  # type: ignore[index]
    assert statuses.pop("s4") is MemberStatus.SUCCEEDED
    assert set(statuses.values()) == {MemberStatus.EARLIER}
    # the batch that failed is shown beside the new one, as the first execution recorded it
    assert failed.summary is not None and resumed.summary is not None
    (failed_batch,) = [w for w in failed.summary.waves if w.status is WaveStatus.FAILED]
    shown = [w for w in resumed.summary.waves if w.key == failed_batch.key]
    assert [(w.attempt, w.status, w.job_id, w.replayed) for w in shown] == [
        (failed_batch.attempt, WaveStatus.FAILED, failed_batch.job_id, True)
    ]


async def test_resume_relaunches_a_finished_member_whose_output_is_gone_as_it_does_a_plain_wave(
    local_harness: Harness, file_root: Root
) -> None:
    async with local_harness.worker():
        await failed_on_s4(local_harness, file_root, "fan-lost-output")
        (file_root.local / "fan-lost-output" / "out-s2.txt").unlink()  # a finished member's output
        write_list(file_root, SEVEN)
        spec = fan_spec(file_root, concurrency=8)
        resumed = await local_harness.finish(await local_harness.start(spec, run_id="fan-lost-output"))
    assert resumed.status == "succeeded", resumed.error
    assert sorted(launches(file_root)) == ["s2", "s4"]
    assert (file_root.local / "fan-lost-output" / "out-s2.txt").exists()


EIGHT = [*SEVEN, {"id": "s7", "rows": 70}]


async def test_resume_with_reread_items_runs_the_new_and_the_failed_items_and_says_what_changed(
    fan_harness: Harness, root: Root
) -> None:
    run_id = root.run_id("fan-reread")
    async with fan_harness.worker():
        await failed_on_s4(fan_harness, root, run_id)
        write_list(root, EIGHT)
        root.write(f"{run_id}/items.json", json.dumps(EIGHT))  # what split would write now
        spec = fan_spec(root, concurrency=8)
        resumed = await fan_harness.finish(await fan_harness.start(spec, run_id=run_id, reread_items=True))
    assert resumed.status == "succeeded", resumed.error
    assert sorted(launches(root)) == ["s4", "s7"]
    assert resumed.ledger is not None
    (record,) = resumed.ledger.fan_outs.values()
    assert record.note == 'read again (--reread-items): 1 items added, 0 removed; + {"id":"s7","rows":70}'
    assert record.count == 8 and record.succeeded == 8


async def test_resume_reread_items_shows_each_list_s_diff_before_it_restarts(
    env: WorkflowEnvironment, fan_harness: Harness, root: Root
) -> None:
    run_id = root.run_id("fan-cli-reread")
    async with fan_harness.worker():
        await failed_on_s4(fan_harness, root, run_id)
        write_list(root, [item for item in EIGHT if item["id"] != "s0"])
        root.write(f"{run_id}/items.json", json.dumps([item for item in EIGHT if item["id"] != "s0"]))
        shown = await npaflow(env, fan_harness, "resume", run_id, "--reread-items")
        assert shown.returncode == 0, shown.stderr
        resumed = await fan_harness.finish(
            fan_harness.client.get_workflow_handle_for(NpaWorkflowRun.run, run_id)
        )
    lines = shown.stdout.splitlines()
    assert lines[0] == f"forEach lists of run {run_id}, read again:"
    assert lines[1].endswith("/items.json: 1 items added, 1 removed") and lines[1].startswith("  work#")
    assert lines[2:4] == ['    + {"id":"s7","rows":70}', '    - {"id":"s0","rows":0}']
    assert lines[4].startswith(f"restarted run {run_id}")
    assert resumed.status == "succeeded", resumed.error
    assert sorted(launches(root)) == ["s4", "s7"]


async def test_resume_reread_items_refuses_a_list_it_cannot_read_now_and_restarts_nothing(
    env: WorkflowEnvironment, local_harness: Harness, file_root: Root
) -> None:
    async with local_harness.worker():
        await failed_on_s4(local_harness, file_root, "fan-cli-broken")
        file_root.write("fan-cli-broken/items.json", '[{"id": "s0"},')
        refused = await npaflow(env, local_harness, "resume", "fan-cli-broken", "--reread-items")
    assert refused.returncode == 2, refused.stdout
    assert "forEach list file://" in refused.stderr and "is not JSON" in refused.stderr, refused.stderr
    assert "resume without --reread-items" in refused.stderr and "Traceback" not in refused.stderr
    description = await local_harness.client.get_workflow_handle("fan-cli-broken").describe()
    assert description.status is not None and description.status.name == "FAILED"
    assert launches(file_root) == []


async def test_an_empty_list_is_a_success_with_zero_members(fan_harness: Harness, root: Root) -> None:
    write_list(root, [])
    outcome = await fan_harness.run(fan_spec(root), run_id=root.run_id("fan-empty"))
    assert outcome.status == "succeeded", outcome.error
    assert launches(root) == []
    members = members_of(outcome, root)
    assert (members.members, members.succeeded) == ([], 0)
    assert not [w for w in outcome.ledger.waves if w.key.group == "work"]


@pytest.mark.parametrize(
    ("items", "says"),
    [
        ([{"id": f"s{n}"} for n in range(9)], "has 9 items, past forEach.max 8"),
        ('[{"id": "s0"},', "is not JSON"),
        ([{"id": "s0"}, {"id": "s1", "meta": {"a": 1}}], "item 1 field 'meta' is a nested object"),
        ([{"id": "s0", "rows": 1}, {"rows": 1}], "item 1 has no field 'id'"),
        ([{"id": "s0"}, {"id": "s0"}], "item 1 repeats item 0"),
        ([{"id": "s0", "rows": 1}, {"id": "s0", "rows": 2}], "items 0 and 1 would both write"),
        ([{"id": "s0/../../s1", "rows": 1}], "item 0 puts a '..' segment in output"),
    ],
    ids=["past-max", "malformed", "nested", "missing-field", "repeated", "shared-output", "climbing"],
)
async def test_a_bad_list_fails_the_group_naming_the_item_and_launches_no_member(
    fan_harness: Harness, root: Root, items: list[object] | str, says: str
) -> None:
    write_list(root, items)
    outcome = await fan_harness.run(fan_spec(root), run_id=root.run_id("fan-bad"))
    assert outcome.status == "failed"
    assert says in outcome.error, outcome.error
    assert launches(root) == []


HOSTILE = [
    {"id": "s0", "v": "a; touch pwned"},
    {"id": "s1", "v": '$(touch pwned) `touch pwned` it\'s "quoted"'},
]


async def test_an_item_value_reaches_the_members_shell_as_data_never_as_code(
    local_harness: Harness, file_root: Root
) -> None:
    write_list(file_root, HOSTILE)
    local, tool, base = file_root.local, file_root.tool, file_root.base
    out = base + "/{{run.id}}/out-{{s.id}}.txt"
    member = (
        "cd "
        + str(local)
        + " && printf '[%s]\\n' {{s.v}} \"{{s.v}}\" '{{s.v}}' >> seen.log && "
        + tool
        + " put "
        + out
        + " ok"
    )
    spec = yaml.safe_load(fan_spec(file_root))
    spec["states"]["shard"] = {"run": {"shell": member}, "outputs": [{"uri": out}]}
    outcome = await local_harness.run(yaml.safe_dump(spec), run_id="fan-hostile")
    assert outcome.status == "succeeded", outcome.error
    assert not (local / "pwned").exists()
    seen = (local / "seen.log").read_text().splitlines()
    assert sorted(seen) == sorted(f"[{item['v']}]" for item in HOSTILE for _ in range(3))


async def test_a_worker_killed_mid_group_is_replaced_and_every_member_launches_once(
    env: WorkflowEnvironment, home: Path, file_root: Root
) -> None:
    write_list(file_root, SEVEN)
    task_queue = f"tq-fankill-{uuid.uuid4().hex[:6]}"
    harness = Harness(env.client, home, LocalBackend(home, WORKER_ID), task_queue)
    first = start_worker_process(env, home, task_queue)
    handle = await harness.start(fan_spec(file_root, concurrency=3, pause=2), run_id="fan-kill")
    log = file_root.local / "launches.log"
    await eventually(lambda: log.exists() and len(log.read_text().split()) >= 3, timeout=60, what="a batch")
    async with replaced_worker(first, env, home, task_queue):
        outcome = await harness.finish(handle)
    assert outcome.status == "succeeded", outcome.error
    assert sorted(launches(file_root)) == sorted(item["id"] for item in SEVEN)
    members = members_of(outcome, file_root)
    assert members.succeeded == len(SEVEN)


async def test_the_skypilot_fake_receives_one_job_group_per_batch_with_the_members_commands(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi, file_root: Root
) -> None:
    write_list(file_root, SEVEN)
    file_root.write("fan-sky/items.json", json.dumps(SEVEN))  # the fake runs no job:
    for item in SEVEN:  # what the split and the members would have written is there already
        file_root.write(f"fan-sky/out-{item['id']}.txt", "rows\n")
    outcome = await fake_sky_harness.run(fan_spec(file_root), run_id="fan-sky", backend="skypilot")
    assert outcome.status == "succeeded", outcome.error
    groups = [list(yaml.safe_load_all(text)) for text in fake_sky.yamls[1:-1]]
    assert [len(documents) - 1 for documents in groups] == [3, 3, 1]
    assert [documents[0]["execution"] for documents in groups[:2]] == ["parallel", "parallel"]
    commands = [task["run"] for documents in groups for task in documents[1:]]
    for item in SEVEN:
        assert sum(f"echo {item['id']} >>" in command for command in commands) == 1
    assert all(w.status is WaveStatus.SUCCEEDED for w in outcome.ledger.waves)


async def test_a_raw_workflow_start_with_an_output_naming_no_item_fails_at_load_and_launches_nothing(
    local_harness: Harness, file_root: Root
) -> None:
    """`temporal workflow start` skips the CLI: the run's own load refuses the spec, naming the field."""
    write_list(file_root, SEVEN)
    spec = fan_spec(file_root).replace('out-{{s.id}}.txt", schema: shard', 'out.txt", schema: shard')
    outcome = await local_harness.run(spec, run_id="fan-raw")
    assert outcome.status == "failed"
    assert "state shard: outputs[0].uri" in outcome.error and "names no item" in outcome.error, outcome.error
    assert launches(file_root) == [] and not (file_root.local / "fan-raw").exists()


def looped_spec(root: Root) -> str:
    """Each of two iterations proposes its own list (iteration n: n + 1 items) and fans out over it.

    File root only: `propose` writes its list with a local path.
    """
    local, tool, base = root.local, root.tool, root.base
    propose = (
        "import json, pathlib, sys; n = int(sys.argv[2]); path = pathlib.Path(sys.argv[1]); "
        "path.parent.mkdir(parents=True, exist_ok=True); "
        "path.write_text(json.dumps([{'id': f'i{n}-{k}'} for k in range(n + 1)]))"
    )
    member = (
        "echo {{s.id}} >> " + f"{local}/launches.log && {tool} put {base}/" + "{{run.id}}/out-{{s.id}}.txt ok"
    )
    return f"""apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {{name: fan-loop}}
initial: refine
states:
  refine:
    sequence: [propose, work]
    loop: {{max: 2}}
    next: done
  propose:
    run:
      argv: [python3, -c, "{propose}", "{local}/{{{{run.id}}}}/{{{{loop.refine}}}}/items.json",
             "{{{{loop.refine}}}}"]
    outputs: [{{uri: "{base}/{{{{run.id}}}}/{{{{loop.refine}}}}/items.json", schema: items}}]
  work:
    parallel: [shard]
    forEach: {{items: "{base}/{{{{run.id}}}}/{{{{loop.refine}}}}/items.json", as: s}}
    maxConcurrency: 2
  shard:
    run: {{shell: "{member}"}}
    outputs: [{{uri: "{base}/{{{{run.id}}}}/out-{{{{s.id}}}}.txt", schema: shard}}]
  done:
    terminal: true
    run: {{shell: "true"}}
"""


async def test_a_fan_out_inside_a_loop_reads_each_iteration_s_own_list_and_keeps_a_record_per_occurrence(
    local_harness: Harness, file_root: Root
) -> None:
    outcome = await local_harness.run(looped_spec(file_root), run_id="fan-loop")
    assert outcome.status == "succeeded", outcome.error
    assert sorted(launches(file_root)) == ["i1-0", "i1-1", "i2-0", "i2-1", "i2-2"]
    assert outcome.ledger is not None
    records = sorted(outcome.ledger.fan_outs.values(), key=lambda record: record.occurrence)
    assert [(record.group, record.count, record.succeeded) for record in records] == [
        ("work", 2, 2),
        ("work", 3, 3),
    ]
    assert [record.items_uri.rsplit("/", 2)[-2] for record in records] == ["1", "2"]
    assert len({record.members_uri for record in records}) == 2
    second = MembersDocument.model_validate_json(file_root.read_uri(records[1].members_uri))
    assert [m.item for m in second.members] == [{"id": "i2-0"}, {"id": "i2-1"}, {"id": "i2-2"}]
