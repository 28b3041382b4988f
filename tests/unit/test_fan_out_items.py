"""What a fan-out's list may hold, how members are keyed, and how the group ends."""

from __future__ import annotations

import json

import pytest

from npaflow.document.models import Artifact, RunBlock, State
from npaflow.fanout import (
    ItemsError,
    MemberRow,
    MemberStatus,
    group_error,
    member_key,
    member_state,
    parsed_items,
)
from npaflow.fanout.verdict import allowed_failures

pytestmark = pytest.mark.unit


def items_of(value: object, max_items: int = 10) -> list[object]:
    return parsed_items(json.dumps(value), uri="s3://b/items.json", max_items=max_items)


def test_scalars_and_flat_objects_are_items() -> None:
    assert items_of(["a", 1, 2.5, True, None, {"id": "x", "n": 3}]) == [
        "a",
        1,
        2.5,
        True,
        None,
        {"id": "x", "n": 3},
    ]


def test_a_member_key_comes_from_content_not_position() -> None:
    assert member_key({"id": "x", "n": 1}) == member_key({"n": 1, "id": "x"})
    assert member_key({"id": "x"}) != member_key({"id": "y"}) and len(member_key("a")) == 12


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"a": 1}, "holds a JSON dict, not a list"),
        ([1] * 11, "has 11 items, past forEach.max 10"),
        ([{"a": [1]}], "item 0 field 'a' is a nested list"),
        ([{"a": 1}, {"b c": 1}], "item 1 field 'b c' is not a name a token can use"),
        ([1, 1], "item 1 repeats item 0"),
        (["{{config.x}}"], "items are data, not templates"),
        (["x" * 2000], "item 0 is 2,002 bytes, past 1,024"),
    ],
    ids=["not-a-list", "past-max", "nested", "bad-field", "repeat", "template", "too-big"],
)
def test_a_list_that_cannot_fan_out_names_the_item_and_the_fix(value: object, says: str) -> None:
    with pytest.raises(ItemsError, match=None) as raised:
        items_of(value)
    assert says in str(raised.value) and "s3://b/items.json" in str(raised.value)


def test_text_that_is_not_json_is_refused() -> None:
    with pytest.raises(ItemsError, match="is not JSON"):
        parsed_items("[1,", uri="u", max_items=5)


TEMPLATE = State(
    name="m",
    run=RunBlock(shell="train --shard {{s.path}} --rows {{ s.rows }}"),
    params={"seed": "{{s.rows}}", "n": 3},
    outputs=(Artifact(uri="s3://b/out/{{s.path}}/"),),
)


def test_a_member_is_its_template_with_the_item_s_values() -> None:
    member = member_state(TEMPLATE, "s", {"path": "p1", "rows": 7}, 0)
    assert member.run is not None and member.run.shell == "train --shard p1 --rows 7"
    assert member.params == {"seed": "7", "n": 3} and member.outputs[0].uri == "s3://b/out/p1/"


def test_a_scalar_item_is_named_by_the_bare_token() -> None:
    template = State(name="m", run=RunBlock(argv=("run", "{{s}}")))
    assert member_state(template, "s", "shard-3", 0).run.argv == ("run", "shard-3")  # type: ignore[union-attr]


def test_a_field_the_item_lacks_is_named_with_its_index() -> None:
    with pytest.raises(ItemsError, match="item 4 has no field 'path'"):
        member_state(TEMPLATE, "s", {"rows": 1}, 4)


def rows(*statuses: MemberStatus) -> list[MemberRow]:
    return [MemberRow(key=f"k{n}", index=n, item=n, status=s) for n, s in enumerate(statuses)]


def test_min_success_allows_the_floor_of_its_share_of_failures() -> None:
    assert [allowed_failures(7, share) for share in (1.0, 0.8, 0.5, 0.0)] == [0, 1, 3, 7]
    assert allowed_failures(10, 0.9) == 1


def test_a_group_within_min_success_has_no_error_and_one_past_it_names_its_failures() -> None:
    ok, bad = MemberStatus.SUCCEEDED, MemberStatus.FAILED
    assert group_error("g", rows(ok, ok, ok, ok, bad), 0.8, "m") == ""
    text = group_error("g", rows(ok, ok, ok, bad, bad), 0.8, "m")
    assert "3 of 5 m members succeeded, under forEach.minSuccess 0.8" in text
    assert "k3 (item 3: 3), k4 (item 4: 4)" in text and "npaflow resume" in text


def test_a_failed_groups_error_says_why_its_first_failed_batch_failed() -> None:
    ok, bad = MemberStatus.SUCCEEDED, MemberStatus.FAILED
    cause = "batch 2 of 3: job j2 reached the run's GPU-hour budget (0.005 GPU-h)"
    text = group_error("g", rows(ok, bad), 1.0, "m", cause)
    assert f"; the first failed batch: {cause};" in text
    assert "the first failed batch" not in group_error("g", rows(ok, bad), 1.0, "m")


def test_members_done_in_an_earlier_execution_count_as_succeeded() -> None:
    assert group_error("g", rows(MemberStatus.EARLIER, MemberStatus.SUCCEEDED), 1.0, "m") == ""


def test_a_group_the_run_ended_inside_is_not_called_running() -> None:
    from npaflow.fanout import FanOutRecord

    record = FanOutRecord(group="work", occurrence=1, items_uri="s3://b/items.json", count=5)
    assert record.text() == "fan-out work: 5 items from s3://b/items.json (running)"
    assert record.text(run_open=False) == (
        "fan-out work: 5 items from s3://b/items.json (the run ended before the group did)"
    )


def test_a_group_of_a_suspended_run_is_called_suspended_not_running() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.fanout import FanOutRecord
    from npaflow.runtime.summary import StatusReport

    record = FanOutRecord(group="work", occurrence=1, items_uri="s3://b/items.json", count=5)
    report = StatusReport(run_id="r1", phase="suspended", execution_status="RUNNING", fan_outs=[record])
    assert "fan-out work: 5 items from s3://b/items.json (suspended)" in status_text(report)
