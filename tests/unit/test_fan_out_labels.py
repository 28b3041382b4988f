"""A fan-out member is shown by its item (`shard-003`), not by its key's digest."""

from __future__ import annotations

from npaflow.cli.artifacts_handler import artifacts_text
from npaflow.fanout import (
    FanOutRecord,
    ItemsRead,
    MembersOutcome,
    item_label,
    member_key,
)
from npaflow.fanout.labels import MAX_LABEL_CHARS
from npaflow.ids import RunId
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.progress_view import progress_view
from npaflow.runtime.reads import ArtifactRow, RunArtifacts
from npaflow.runtime.run_state import RunState
from npaflow.runtime.ui_text import current_details
from npaflow.runtime.vocabulary import RunPhase, WaveStatus
from npaflow.waves import WaveKey, items_text, wave_text


def test_an_object_item_is_named_by_its_id_field() -> None:
    assert item_label({"rows": 4000, "id": "shard-003"}) == "shard-003"


def test_name_fields_are_looked_for_in_order_and_a_blank_one_is_passed_over() -> None:
    assert item_label({"path": "/data/a", "name": "alpha"}) == "alpha"
    assert item_label({"id": " ", "path": "/data/a"}) == "/data/a"
    assert item_label({"id": 7, "name": "seven"}) == "7"


def test_an_object_without_a_name_field_is_named_by_its_fields() -> None:
    assert item_label({"lr": 0.1, "bs": 8, "warm": True}) == "lr=0.1, bs=8, warm=true"


def test_a_scalar_item_is_named_by_its_value() -> None:
    assert [item_label(v) for v in ("s3://b/k", 3, 2.5, False, None)] == [
        "s3://b/k",
        "3",
        "2.5",
        "false",
        "null",
    ]


def test_a_label_is_one_line_and_clipped() -> None:
    assert item_label("a\nb\tc") == "a b c"
    long = item_label("x" * 500)
    assert len(long) == MAX_LABEL_CHARS and long.endswith("…")


def test_items_text_names_four_then_counts_the_rest() -> None:
    assert items_text([f"s{n}" for n in range(6)]) == " [s0, s1, s2, s3, +2 more]"
    assert items_text([f"s{n}" for n in range(5)]) == " [s0, s1, s2, s3, s4]"
    assert items_text([]) == "" and items_text(["", ""]) == ""


def test_a_wave_without_items_reads_as_before() -> None:
    assert wave_text(["train", "eval"], []) == "train,eval"
    assert wave_text(["shard"] * 3, ["a", "b", "c"]) == "shard ×3 [a, b, c]"


def test_a_record_names_its_failed_members_by_item_and_keeps_their_keys() -> None:
    items = ({"id": "s0"}, {"id": "s1"}, "plain")
    failed = [member_key(items[1]), member_key(items[2])]
    outcome = MembersOutcome(
        group="g", occurrence=1, items_uri="u", digest="d", min_success=0.5, count=3, failed=failed
    )
    record = outcome.record(ItemsRead(items=items), ended=True)
    assert record.failed == failed and record.failed_items == ["s1", "plain"]
    assert "; failed: s1, plain;" in record.text() + ";"


def test_a_record_from_an_older_ledger_names_its_failed_members_by_key() -> None:
    record = FanOutRecord(
        group="g", occurrence=1, items_uri="u", count=2, succeeded=1, failed=["abc"], ended=True
    )
    assert "failed: abc" in record.text()


def test_a_members_output_is_listed_by_its_item_and_its_waves_number_not_its_whole_key() -> None:
    key = "002|g|g:shard@000000000000:-,g:shard@000000000001:-"
    row = ArtifactRow(kind="output", state="shard", uri="file:///o/a.txt", wave_key=key, attempt=1, item="a")
    text = artifacts_text(RunArtifacts(run_id=RunId("r1"), rows=[row]))
    assert (
        text.splitlines()[1]
        == "  output   shard [a]            -       file:///o/a.txt  (wave 002, attempt 1)"
    )


def test_the_temporal_uis_details_name_a_running_batchs_items_as_inert_markdown() -> None:
    state = RunState(RunId("r"))
    key = WaveKey.parse("002|g|g:shard@000000000000:-,g:shard@000000000001:-")
    record = WaveAttemptRecord(key=key, states=["shard", "shard"], items=["<b>a</b>", "b"], job_id="j1")
    state.progress.running[(key, 1)] = record.model_copy(update={"status": WaveStatus.RUNNING})
    details = current_details(progress_view(state))
    assert "**running** shard ×2 \\[&lt;b&gt;a&lt;/b&gt;, b\\] (job j1" in details


def test_a_running_fan_out_counts_its_members_so_far_and_its_ended_record_names_the_failures() -> None:
    state = RunState(RunId("r"))
    state.add_fan_out(FanOutRecord(group="g", occurrence=1, items_uri="u", count=7))
    pending = dict(state.ledger._fan_outs)  # the read, to go with the next export
    state.fan_out_progressed("g#1", succeeded=3, failing=1)
    assert (
        state.fan_outs["g#1"].text()
        == "fan-out g: 7 items from u (running: 3 of 7 succeeded, 1 failed so far)"
    )
    ended_early = "(the run ended before the group did: 3 of 7 succeeded, 1 failed)"
    assert state.fan_outs["g#1"].text(run_open=False).endswith(ended_early)
    assert state.ledger._fan_outs == pending  # the counts are no ledger change (no export added)
    ended = FanOutRecord(
        group="g", occurrence=1, items_uri="u", count=7, succeeded=6, failed=["k"], ended=True
    )
    state.add_fan_out(ended)
    state.fan_out_progressed("g#1", succeeded=1, failing=0)  # a late count never overwrites the end
    assert state.fan_outs["g#1"] == ended


def test_the_pages_badge_of_a_running_fan_out_counts_its_members_after_each_batch() -> None:
    record = FanOutRecord(group="g", occurrence=1, items_uri="u", count=7)
    assert record.badge() == "7 items"
    assert record.model_copy(update={"succeeded": 3, "failing": 1}).badge() == "3/7 ok · 1 failed"


def test_the_runs_result_text_names_the_items_a_fan_out_batch_ran() -> None:
    from npaflow.runtime.summary import RunSummary

    key = WaveKey.parse("002|g|g:shard@000000000000:-,g:shard@000000000001:-")
    record = WaveAttemptRecord(key=key, states=["shard", "shard"], items=["a", "b"], job_id="j1")
    plain = WaveAttemptRecord(key=WaveKey.parse("001|serial|:prep:-"), states=["prep"], job_id="j0")
    summary = RunSummary(
        workflow="w", run_id=RunId("r"), status=RunPhase.SUCCEEDED, wave_count=2, waves=[plain, record]
    )
    lines = summary.text_lines()
    assert lines[3].endswith("states=prep job_id=j0")
    assert lines[4].endswith("states=shard,shard job_id=j1 items=[a, b]")


def test_the_runs_result_text_says_which_members_a_retried_batch_carried_from_before() -> None:
    from npaflow.runtime.ledger import CarriedMember
    from npaflow.runtime.summary import RunSummary

    key = WaveKey.parse("002|g|g:shard@000000000000:-,g:shard@000000000001:-")
    done = CarriedMember(item="000000000000", attempt=1, job_id="j1", job_name="r-02-g")
    retried = WaveAttemptRecord(
        key=key, states=["shard"] * 2, items=["a", "b"], job_id="j2", attempt=2, carried=[done]
    )
    summary = RunSummary(
        workflow="w", run_id=RunId("r"), status=RunPhase.SUCCEEDED, wave_count=1, waves=[retried]
    )
    assert summary.text_lines()[3].endswith("job_id=j2 items=[a, b] (a done before)")


def test_a_fan_outs_batches_are_no_passes_of_each_other_but_the_same_members_again_are() -> None:
    from npaflow.waves import pass_labels

    first = WaveKey.parse("002|g|g:shard@000000000000:-,g:shard@000000000001:-")
    second = WaveKey.parse("003|g|g:shard@000000000002:-,g:shard@000000000003:-")
    again = WaveKey.parse("005|g|g:shard@000000000000:-,g:shard@000000000001:-")  # a loop's next pass
    assert pass_labels([first, second]) == {2: first.label(), 3: second.label()}
    labels = pass_labels([first, second, again])
    assert (labels[2], labels[5]) == (f"{first.label()} #1", f"{first.label()} #2")
