"""The spec `npaflow init` writes runs as its comments say: promotes on round 3, then publishes."""

from __future__ import annotations

from pathlib import Path

import pytest

from npaflow.shipped import STARTER_SPEC
from tests.harness import Harness

pytestmark = pytest.mark.integration


async def test_the_starter_promotes_on_its_third_round_and_publishes(
    local_harness: Harness, tmp_path: Path
) -> None:
    outcome = await local_harness.run(
        STARTER_SPEC.read_text(), run_id="starter-run", vars={"root": str(tmp_path)}
    )
    assert outcome.status == "succeeded", outcome.error
    assert outcome.ledger is not None
    states = [wave.states[0] for wave in outcome.ledger.waves]
    assert states == ["train", "evaluate"] * 3 + ["route", "publish"]
    assert [d.decision for d in outcome.ledger.decisions][-2:] == ["promote_checkpoint", "promote_checkpoint"]
    assert (tmp_path / "starter-run" / "published.txt").read_text() == "checkpoint of round 3\n"
