"""Heartbeats: what a retried attempt resumes from, sent no more often than it needs."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.testing import ActivityEnvironment

from activities import heartbeat
from activities.heartbeat import heartbeating
from npaflow.runtime.messages import HeartbeatDetails

pytestmark = pytest.mark.unit


def recording_environment() -> tuple[ActivityEnvironment, list[dict]]:
    env, beats = ActivityEnvironment(), []
    env.on_heartbeat = lambda *details: beats.append(details[0])
    return env, beats


async def test_the_first_beat_goes_out_at_once_with_the_details() -> None:
    env, beats = recording_environment()

    async def launch() -> None:
        async with heartbeating(HeartbeatDetails(worker_id="w1")):
            pass

    await env.run(launch)
    assert [beat["worker_id"] for beat in beats] == ["w1"]


async def test_a_quiet_start_that_ends_within_the_first_interval_sends_no_beat() -> None:
    env, beats = recording_environment()

    async def short_await() -> None:
        async with heartbeating(HeartbeatDetails(job_id="j-1"), quiet_start=True) as hb:
            hb.update(polls=1)
            hb.update(polls=2)

    await env.run(short_await)
    assert beats == []


async def test_a_quiet_start_sends_the_latest_details_once_the_first_interval_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_EVERY", 0.05)
    env, beats = recording_environment()

    async def longer_await() -> None:
        async with heartbeating(HeartbeatDetails(job_id="j-1"), quiet_start=True) as hb:
            hb.update(polls=3)
            await asyncio.sleep(0.2)

    await env.run(longer_await)
    assert beats and beats[0]["job_id"] == "j-1" and beats[0]["polls"] == 3
