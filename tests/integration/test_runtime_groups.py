"""Parallel groups at runtime: JobGroups, the barrier, the cap (reference §11.2 cases 17–19)."""

from __future__ import annotations

import pytest

from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend

pytestmark = pytest.mark.integration


async def test_runtime_launches_parallel_group_as_job_group_with_barrier(
    harness: Harness, fake: FakeBackend
) -> None:
    outcome = await harness.run("runtime/fanout.yaml")
    assert outcome.status == "succeeded"
    assert fake.submissions == [["shard-a", "shard-b"], ["shard-c"], ["join"]]
    assert [launch.header["execution"] for launch in fake.launches] == ["parallel", "serial", "serial"]
    assert "primary_tasks" not in fake.launches[0].header
    assert [w.kind for w in outcome.summary.waves] == ["parallel", "serial", "serial"]


@pytest.mark.parametrize(
    ("cap", "expected"),
    [
        (1, [["shard-a"], ["shard-b"], ["shard-c"], ["join"]]),
        (8, [["shard-a", "shard-b"], ["shard-c"], ["join"]]),
    ],
)
async def test_runtime_max_concurrency_option_is_a_cap_not_an_override(
    harness: Harness, fake: FakeBackend, cap: int, expected: list[list[str]]
) -> None:
    await harness.run("runtime/fanout.yaml", max_concurrency=cap)
    assert fake.submissions == expected


async def test_parallel_group_failure_stops_the_barrier(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["RUNNING", "FAILED"]]
    outcome = await harness.run("runtime/fanout.yaml")
    assert outcome.status == "failed"
    assert fake.submissions == [["shard-a", "shard-b"]]
    assert "reached terminal status FAILED" in outcome.error
    assert all("join" not in w.states for w in outcome.summary.waves)


async def test_job_group_records_concurrency_observed(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["RUNNING", "RUNNING", "SUCCEEDED"]]
    outcome = await harness.run("runtime/fanout.yaml")
    assert outcome.summary.waves[0].max_concurrent_observed == 2
