"""Fan-out from data end to end: a stage writes a list, the group runs one member per item.

Each member appends its item's id to a launch log outside its outputs, so the
log says which members really ran; a member fails while its id is in `fail`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from npaflow.fanout import MembersDocument, MemberStatus, member_key
from npaflow.picture.blocks import spec_blocks
from npaflow.picture.node_states import node_views
from npaflow.runtime.request import BackendName
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.spec import load_spec_from_str
from tests.harness import Harness, RunOutcome
from tests.helpers import CATALOG
from tests.integration.fake_skypilot import FakeSkyPilotApi

pytestmark = pytest.mark.integration

SEVEN = [{"id": f"s{n}", "rows": 10 * n} for n in range(7)]


def fan_spec(
    root: Path, *, min_success: float = 1.0, cache: bool = False, concurrency: int = 3, pause: float = 0
) -> str:
    """split copies `list.json` into the run; `work` fans out over it; `done` reads members.json.

    A failing member fails at once; the others take `pause` seconds first.
    """
    member = (
        "echo {{s.id}} >> " + f"{root}/launches.log && "
        "! grep -qx {{s.id}} " + f"{root}/fail && sleep {pause} && "
        "mkdir -p " + f"{root}" + "/{{run.id}} && "
        "echo rows={{config.rows}} > " + f"{root}" + "/{{run.id}}/out-{{s.id}}.txt"
    )
    return f"""apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {{name: fan}}
initial: split
states:
  split:
    run: {{shell: "mkdir -p {root}/{{{{run.id}}}} && cp {root}/list.json {root}/{{{{run.id}}}}/items.json"}}
    outputs: [{{uri: "file://{root}/{{{{run.id}}}}/items.json", schema: items}}]
    next: work
  work:
    parallel: [shard]
    forEach: {{items: "file://{root}/{{{{run.id}}}}/items.json", as: s, max: 8, minSuccess: {min_success}}}
    maxConcurrency: {concurrency}
    next: done
  shard:
    run: {{shell: "{member}"}}
    params: {{rows: "{{{{s.rows}}}}"}}
    outputs: [{{uri: "file://{root}/{{{{run.id}}}}/out-{{{{s.id}}}}.txt", schema: shard}}]
    cache: {str(cache).lower()}
  done:
    terminal: true
    run: {{shell: "cat $(echo {{{{state.work.uri}}}} | cut -c8-) > {root}/{{{{run.id}}}}/members-seen.json"}}
"""


def write_list(root: Path, items: list[object], *, failing: tuple[str, ...] = ()) -> None:
    (root / "list.json").write_text(json.dumps(items))
    (root / "fail").write_text("".join(f"{name}\n" for name in failing))


def launches(root: Path) -> list[str]:
    log = root / "launches.log"
    lines = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def members_of(outcome: RunOutcome) -> MembersDocument:
    assert outcome.ledger is not None
    (record,) = outcome.ledger.fan_outs.values()
    return MembersDocument.model_validate_json(Path(record.members_uri.removeprefix("file://")).read_text())


async def test_a_seven_item_list_runs_seven_members_with_their_own_params_and_outputs(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN)
    outcome = await local_harness.run(fan_spec(tmp_path), run_id="fan-seven")
    assert outcome.status == "succeeded", outcome.error
    assert sorted(launches(tmp_path)) == [item["id"] for item in SEVEN]
    for item in SEVEN:
        assert (tmp_path / "fan-seven" / f"out-{item['id']}.txt").read_text() == f"rows={item['rows']}\n"
    members = members_of(outcome)
    assert [m.item for m in members.members] == SEVEN and members.succeeded == 7
    assert json.loads((tmp_path / "fan-seven" / "members-seen.json").read_text())["succeeded"] == 7
    (record,) = outcome.ledger.fan_outs.values()
    assert record.count == 7 and len(record.digest) == 64 and record.ended


async def test_batches_of_max_concurrency_carry_their_members_item_keys(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN)
    outcome = await local_harness.run(fan_spec(tmp_path), run_id="fan-keys")
    assert outcome.ledger is not None
    batches = [w for w in outcome.ledger.waves if w.key.group == "work"]
    assert [len(w.key.members) for w in batches] == [3, 3, 1]
    keys = [m.item for w in batches for m in w.key.members]
    assert sorted(keys) == sorted(m.key for m in members_of(outcome).members)
    assert all(
        task.task_name == f"shard-{key}"
        for w in batches
        for task, key in zip(w.tasks, [m.item for m in w.key.members], strict=True)
    )


async def test_a_reordered_list_on_a_rerun_with_cache_launches_nothing(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN)
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(fan_spec(tmp_path, cache=True)))
        assert first.status == "succeeded", first.error
        assert len(launches(tmp_path)) == 7
        write_list(tmp_path, list(reversed(SEVEN)))
        second = await local_harness.finish(await local_harness.start(fan_spec(tmp_path, cache=True)))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == []
    assert {m.key for m in members_of(first).members} == {m.key for m in members_of(second).members}


async def test_an_item_added_on_a_rerun_with_cache_launches_only_that_item(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN)
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(fan_spec(tmp_path, cache=True)))
        assert first.status == "succeeded", first.error
        launches(tmp_path)
        write_list(tmp_path, [*SEVEN, {"id": "s7", "rows": 70}])
        second = await local_harness.finish(await local_harness.start(fan_spec(tmp_path, cache=True)))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == ["s7"]


async def test_one_failed_member_under_min_success_0_8_lets_the_run_succeed_and_lists_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN, failing=("s4",))
    outcome = await local_harness.run(fan_spec(tmp_path, min_success=0.8), run_id="fan-partial")
    assert outcome.status == "succeeded", outcome.error
    members = members_of(outcome)
    assert [m.item["id"] for m in members.members if m.status is MemberStatus.FAILED] == ["s4"]  # type: ignore[index]
    (record,) = outcome.ledger.fan_outs.values()
    assert record.failed == [m.key for m in members.members if m.status is MemberStatus.FAILED]
    assert (record.succeeded, record.count) == (6, 7)


async def test_a_member_failing_first_stops_none_of_its_batch_mates(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN, failing=("s4",))
    outcome = await local_harness.run(fan_spec(tmp_path, min_success=0.8, pause=1), run_id="fan-mates")
    assert outcome.status == "succeeded", outcome.error
    statuses = {m.item["id"]: m.status for m in members_of(outcome).members}  # type: ignore[index]
    assert [name for name, status in statuses.items() if status is not MemberStatus.SUCCEEDED] == ["s4"]


async def test_status_the_summary_and_the_run_page_name_a_fan_out_s_failed_members(
    local_harness: Harness, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN, failing=("s4",))
    outcome = await local_harness.run(fan_spec(tmp_path, min_success=0.8), run_id="fan-told")
    assert outcome.summary is not None and outcome.ledger is not None
    failed = member_key(SEVEN[4])
    said = f"fan-out work: 6 of 7 members succeeded (minSuccess 0.8); failed: {failed}; members: file://"
    assert any(line.startswith(said) for line in outcome.summary.text_lines())
    view = outcome.summary.status_view(BackendName.LOCAL)
    assert [record.failed for record in view.fan_outs] == [[failed]]
    spec = load_spec_from_str(fan_spec(tmp_path, min_success=0.8), "fan.yaml", catalog=CATALOG)
    blocks = spec_blocks(spec)
    assert any(block.caption().startswith("work: forEach s") for top in blocks for block in top.walk())
    assert node_views(blocks, outcome.ledger)["work"].detail.startswith(said)


async def failed_on_s4(harness: Harness, root: Path, run_id: str) -> RunOutcome:
    """A run of the seven items, all in one batch, whose member s4 fails (minSuccess 1.0)."""
    write_list(root, SEVEN, failing=("s4",))
    failed = await harness.finish(await harness.start(fan_spec(root, concurrency=8), run_id=run_id))
    assert failed.status == "failed"
    assert sorted(launches(root)) == sorted(item["id"] for item in SEVEN)
    return failed


async def test_one_failed_member_under_min_success_1_fails_the_run_naming_it_and_resume_relaunches_only_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        failed = await failed_on_s4(local_harness, tmp_path, "fan-resume")
        assert "6 of 7 shard members succeeded" in failed.error and "s4" in failed.error, failed.error
        write_list(tmp_path, SEVEN)  # the fix
        spec = fan_spec(tmp_path, concurrency=8)
        resumed = await local_harness.finish(await local_harness.start(spec, run_id="fan-resume"))
    assert resumed.status == "succeeded", resumed.error
    assert launches(tmp_path) == ["s4"]
    statuses = {m.item["id"]: m.status for m in members_of(resumed).members}  # type: ignore[index]
    assert statuses.pop("s4") is MemberStatus.SUCCEEDED
    assert set(statuses.values()) == {MemberStatus.EARLIER}


async def test_resume_with_reread_items_runs_the_new_and_the_failed_items_and_says_what_changed(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await failed_on_s4(local_harness, tmp_path, "fan-reread")
        write_list(tmp_path, [*SEVEN, {"id": "s7", "rows": 70}])
        spec = fan_spec(tmp_path, concurrency=8)
        (tmp_path / "fan-reread" / "items.json").write_text((tmp_path / "list.json").read_text())
        resumed = await local_harness.finish(
            await local_harness.start(spec, run_id="fan-reread", reread_items=True)
        )
    assert resumed.status == "succeeded", resumed.error
    assert sorted(launches(tmp_path)) == ["s4", "s7"]
    assert resumed.ledger is not None
    (record,) = resumed.ledger.fan_outs.values()
    assert record.note == 'read again (--reread-items): 1 items added, 0 removed; + {"id":"s7","rows":70}'
    assert record.count == 8 and record.succeeded == 8


async def test_an_empty_list_is_a_success_with_zero_members(local_harness: Harness, tmp_path: Path) -> None:
    write_list(tmp_path, [])
    outcome = await local_harness.run(fan_spec(tmp_path), run_id="fan-empty")
    assert outcome.status == "succeeded", outcome.error
    assert launches(tmp_path) == []
    members = members_of(outcome)
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
    ],
    ids=["past-max", "malformed", "nested", "missing-field", "repeated"],
)
async def test_a_bad_list_fails_the_group_naming_the_item_and_launches_no_member(
    local_harness: Harness, tmp_path: Path, items: object, says: str
) -> None:
    (tmp_path / "list.json").write_text(items if isinstance(items, str) else json.dumps(items))
    outcome = await local_harness.run(fan_spec(tmp_path), run_id="fan-bad")
    assert outcome.status == "failed"
    assert says in outcome.error, outcome.error
    assert launches(tmp_path) == []


async def test_the_skypilot_fake_receives_one_job_group_per_batch_with_the_members_commands(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi, tmp_path: Path
) -> None:
    write_list(tmp_path, SEVEN)
    (tmp_path / "fan-sky").mkdir()
    (tmp_path / "fan-sky" / "items.json").write_text(json.dumps(SEVEN))  # the fake runs no job:
    for item in SEVEN:  # what the split and the members would have written is there already
        (tmp_path / "fan-sky" / f"out-{item['id']}.txt").write_text("rows\n")
    outcome = await fake_sky_harness.run(fan_spec(tmp_path), run_id="fan-sky", backend="skypilot")
    assert outcome.status == "succeeded", outcome.error
    groups = [list(yaml.safe_load_all(text)) for text in fake_sky.yamls[1:-1]]
    assert [len(documents) - 1 for documents in groups] == [3, 3, 1]
    assert [documents[0]["execution"] for documents in groups[:2]] == ["parallel", "parallel"]
    commands = [task["run"] for documents in groups for task in documents[1:]]
    for item in SEVEN:
        assert sum(f"echo {item['id']} >>" in command for command in commands) == 1
    assert all(w.status is WaveStatus.SUCCEEDED for w in outcome.ledger.waves)


async def test_a_raw_workflow_start_with_an_output_naming_no_item_fails_at_load_and_launches_nothing(
    local_harness: Harness, tmp_path: Path
) -> None:
    """`temporal workflow start` skips the CLI: the run's own load refuses the spec, naming the field."""
    write_list(tmp_path, SEVEN)
    spec = fan_spec(tmp_path).replace('out-{{s.id}}.txt", schema: shard', 'out.txt", schema: shard')
    outcome = await local_harness.run(spec, run_id="fan-raw")
    assert outcome.status == "failed"
    assert "state shard: outputs[0].uri" in outcome.error and "names no item" in outcome.error, outcome.error
    assert launches(tmp_path) == [] and not (tmp_path / "fan-raw").exists()
