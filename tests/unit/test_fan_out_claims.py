"""Each fan-out member's outputs are its own: checked before any member launches."""

from __future__ import annotations

import pytest

from npaflow.fanout import ItemsError, check_claims

pytestmark = pytest.mark.unit

TEMPLATE = ["s3://b/run/out-{{s.id}}.txt"]


def test_members_writing_their_own_outputs_pass() -> None:
    check_claims([(0, ["s3://b/run/out-a.txt"]), (1, ["s3://b/run/out-b.txt"])], TEMPLATE)


def test_two_items_sharing_the_field_an_output_names_fail_naming_both() -> None:
    with pytest.raises(ItemsError, match=r"items 0 and 2 would both write s3://b/run/out-a\.txt"):
        check_claims(
            [(0, ["s3://b/run/out-a.txt"]), (1, ["s3://b/run/out-b.txt"]), (2, ["s3://b/run/out-a.txt"])],
            TEMPLATE,
        )


def test_an_item_leading_an_output_up_a_directory_fails() -> None:
    with pytest.raises(ItemsError, match=r"item 1 puts a '\.\.' segment in output"):
        check_claims([(0, ["file:///r/a/x"]), (1, ["file:///r/b/../a/x"])], ["file:///r/{{s.id}}/x"])


def test_a_dot_segment_is_no_climb_but_two_spellings_of_one_place_collide() -> None:
    check_claims([(0, ["file:///r/./a/x"])], ["file:///r/{{s.id}}/x"])
    with pytest.raises(ItemsError, match="items 0 and 1 would both write"):
        check_claims([(0, ["file:///r/a/x"]), (1, ["file:///r/./a/x"])], ["file:///r/{{s.id}}/x"])


def test_a_template_that_climbs_itself_is_compared_by_place() -> None:
    template = ["file:///r/../r/{{s.id}}"]
    with pytest.raises(ItemsError, match="items 0 and 1 would both write"):
        check_claims([(0, ["file:///r/../r/a"]), (1, ["file:///r/./a"])], template)
