"""A loop of 2,000 waves completes across bounded executions, each wave launched once (issue 63).

Its own file, so the test processes share the suite's longest test with the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_wide_runs import executions, run_by_uri, views_agree
from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend
from tests.spec_factory import long_loop

pytestmark = pytest.mark.e2e


async def test_a_2000_wave_loop_completes_in_bounded_executions(
    env: WorkflowEnvironment, harness: Harness, fake: FakeBackend, ui: str, tmp_path: Path
) -> None:
    fake.poll_interval = 0.005  # it answers at once: no 50 ms tick per wave
    async with harness.worker():
        outcome = await run_by_uri(harness, long_loop(2000), tmp_path, "loop-2000")
        assert outcome.status == "succeeded", outcome.error
        await views_agree(env, harness, outcome, ui, raw_pages=False)  # see views_agree
    assert await executions(harness, outcome.handle) > 1
    assert len(fake.launches) == 2001  # each wave launched once across every execution
    assert outcome.ledger is not None and len(outcome.ledger.waves) == 2001
