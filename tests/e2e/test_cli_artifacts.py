"""`npaflow artifacts`: a run's outputs (present or missing now), decisions and their sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness

pytestmark = pytest.mark.e2e


async def test_artifacts_lists_a_gate_loop_runs_outputs_and_decisions_and_sees_one_go_missing(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        outcome = await local_harness.finish(
            await local_harness.start(
                (Path(__file__).parents[2] / "specs/examples/gate-loop.yaml").read_text(),
                run_id="art-gate",
                vars={"root": str(tmp_path)},
            )
        )
        assert outcome.status == "succeeded"
        (tmp_path / "art-gate" / "published.txt").unlink()
        listed = await npaflow(env, local_harness, "artifacts", "art-gate", "--json")
        gate_only = await npaflow(env, local_harness, "artifacts", "art-gate", "--state", "quality-gate")
        text = await npaflow(env, local_harness, "artifacts", "art-gate")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["rows"]
    outputs = {(r["state"], Path(r["uri"]).name): r for r in rows if r["kind"] == "output"}
    assert outputs[("caption-batch", "captions.txt")]["exists"] is True
    assert outputs[("quality-gate", "decision.json")]["schema_label"] == "npaflow.threshold_decision.v1"
    assert outputs[("publish", "published.txt")]["exists"] is False  # deleted after the run
    decisions = [(r["state"], r["detail"]) for r in rows if r["kind"] == "decision"]
    assert ("quality-gate", "promote_checkpoint (artifact)") in decisions
    assert gate_only.returncode == 0
    body = gate_only.stdout.splitlines()[1:]
    assert body and all(line.split()[1] == "quality-gate" for line in body)
    (missing,) = [line for line in text.stdout.splitlines() if "MISSING" in line]
    assert missing.split()[:2] == ["output", "publish"] and "published.txt" in missing


async def test_artifacts_of_an_unknown_run_is_exit_2(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    result = await npaflow(env, local_harness, "artifacts", "no-such-run")
    assert result.returncode == 2 and "no run with id 'no-such-run'" in result.stderr
