"""Parallel-group validation (reference §3 `_validate_parallel_group`, §11.1 cases 2–8)."""

from __future__ import annotations

import pytest

from tests.helpers import issues_of, messages_of, minimal_doc

pytestmark = pytest.mark.unit


def group_doc(members: list[str] | None = None, **group: object) -> dict:
    body = {"parallel": members or ["a", "b"], "next": "done", **group}
    return minimal_doc(grp=body, a={"run": {"shell": "echo a"}}, b={"run": {"shell": "echo b"}})


def test_a_valid_group_passes() -> None:
    assert issues_of(group_doc(maxConcurrency=1, parallelCount=2)) == []


def test_unknown_parallel_member_is_rejected() -> None:
    assert "unknown parallel member 'zz'" in messages_of(group_doc(["a", "zz"]))


def test_duplicate_parallel_member_is_rejected() -> None:
    assert "duplicate parallel member" in messages_of(group_doc(["a", "a"]))


def test_terminal_parallel_member_is_rejected() -> None:
    doc = group_doc()
    doc["states"]["a"]["terminal"] = True
    assert "cannot be terminal" in messages_of(doc)


def test_parallel_member_may_not_declare_next() -> None:
    doc = group_doc()
    doc["states"]["a"]["next"] = "done"
    assert "must not declare next/transitions" in messages_of(doc)


def test_parallel_member_must_be_a_leaf() -> None:
    doc = group_doc(["a", "seq"])
    doc["states"]["seq"] = {"sequence": ["b"]}
    assert "parallel member 'seq' must be a leaf state" in messages_of(doc)


def test_parallel_member_cannot_be_the_group_itself() -> None:
    assert "parallel member cannot be itself" in messages_of(group_doc(["a", "grp"]))


def test_parallel_and_sequence_are_exclusive() -> None:
    assert "not both" in messages_of(group_doc(sequence=["a"]))


def test_loop_on_parallel_group_rejected() -> None:
    assert "loop is not supported directly" in messages_of(group_doc(loop={"max": 2}))


def test_parallel_group_cannot_declare_run() -> None:
    assert "cannot also declare run/toolRef" in messages_of(group_doc(run={"shell": "x"}))


def test_parallel_count_must_equal_member_count() -> None:
    assert "parallelCount resolves to 3, but the group declares 2 members" in messages_of(
        group_doc(parallelCount=3)
    )


def test_parallel_count_may_come_from_config() -> None:
    doc = group_doc(parallelCount="{{config.shards}}")
    doc["config"] = {"shards": 2}
    assert issues_of(doc) == []


def test_max_concurrency_requires_parallel() -> None:
    doc = minimal_doc(done={"terminal": True, "run": {"shell": "x"}, "maxConcurrency": 2})
    assert "maxConcurrency requires a parallel group" in messages_of(doc)


def test_parallel_count_requires_parallel() -> None:
    doc = minimal_doc(done={"terminal": True, "run": {"shell": "x"}, "parallelCount": 2})
    assert "parallelCount requires a parallel group" in messages_of(doc)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "maxConcurrency must be >= 1, got 0"),
        (65, "maxConcurrency must be <= 64, got 65"),
    ],
)
def test_max_concurrency_is_bounded(value: int, expected: str) -> None:
    assert expected in messages_of(group_doc(maxConcurrency=value))


def test_bad_params_token_fails_validation() -> None:
    doc = group_doc()
    doc["states"]["a"]["params"] = {"images_uri": "s3://b/{{config.nope}}/"}
    assert "params.images_uri" in messages_of(doc)
