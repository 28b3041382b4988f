"""Loops, decisions and branches at runtime (reference §11.2 cases 6, 10, 14–16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npaflow.catalog import load_builtin_catalog
from npaflow.plan import build_plan
from npaflow.spec import load_spec_from_path
from tests.harness import SPECS, Harness
from tests.integration.fake_backend import FakeBackend

pytestmark = pytest.mark.integration


def write_decisions(root: Path, run_id: str, decisions: list[str], folder: str = "iteration-{}") -> None:
    for index, decision in enumerate(decisions, start=1):
        path = root / run_id / folder.format(index) / "decision.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"decision": decision}))


async def test_runtime_early_exits_when_gate_promotes_on_first_iteration(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    write_decisions(tmp_path, "rt-early", ["promote"])
    outcome = await harness.run("runtime/gate-loop.yaml", run_id="rt-early", vars={"root": str(tmp_path)})
    assert outcome.status == "succeeded"
    assert fake.submissions == [["work"], ["gate"], ["publish"]]
    assert outcome.summary.decisions[-1].decision == "promote_checkpoint"


async def test_runtime_runs_full_budget_when_gate_keeps_looping(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    write_decisions(tmp_path, "rt-full", ["loop_back"] * 3)
    outcome = await harness.run("runtime/gate-loop.yaml", run_id="rt-full", vars={"root": str(tmp_path)})
    assert outcome.status == "succeeded"
    assert fake.submissions == [["work"], ["gate"]] * 3 + [["publish"]]
    assert len(outcome.summary.decisions) == 3
    work = [launch for launch in fake.launches if launch.states == ["work"]]
    assert [launch.env("NPA_WORKFLOW_FENCE_SEQUENCE") for launch in work] == ["1", "3", "5"]
    assert {launch.env("NPA_WORKFLOW_FENCE_ATTEMPT") for launch in work} == {"1"}


async def test_runtime_reads_exact_iteration_scoped_decision_output(harness: Harness, tmp_path: Path) -> None:
    write_decisions(tmp_path, "rt-scoped", ["loop_back", "promote"])
    outcome = await harness.run("runtime/gate-loop.yaml", run_id="rt-scoped", vars={"root": str(tmp_path)})
    uris = [d.uri for d in outcome.summary.decisions]
    assert uris == [
        f"file://{tmp_path}/rt-scoped/iteration-1/decision.json",
        f"file://{tmp_path}/rt-scoped/iteration-2/decision.json",
    ]
    assert {d.source for d in outcome.summary.decisions} == {"artifact"}


@pytest.mark.parametrize(("decision", "target"), [("promote", "publish"), ("loop_back", "escalate")])
async def test_runtime_branch_follows_transition_goto(
    harness: Harness, fake: FakeBackend, tmp_path: Path, decision: str, target: str
) -> None:
    write_decisions(tmp_path, f"rt-branch-{target}", [decision], folder="route")
    outcome = await harness.run(
        "runtime/branch.yaml", run_id=f"rt-branch-{target}", vars={"root": str(tmp_path)}
    )
    assert outcome.status == "succeeded"
    assert fake.submissions == [["route"], [target]]


@pytest.mark.parametrize(
    "decisions", [["promote"], ["loop_back", "promote"], ["loop_back", "loop_back", "loop_back"]]
)
async def test_runtime_sequence_matches_plan_time_unroll(
    harness: Harness, fake: FakeBackend, tmp_path: Path, decisions: list[str]
) -> None:
    run_id = "rt-eq-" + "-".join(d[:2] for d in decisions)
    write_decisions(tmp_path, run_id, decisions)
    outcome = await harness.run("runtime/gate-loop.yaml", run_id=run_id, vars={"root": str(tmp_path)})
    catalog = load_builtin_catalog()
    spec = load_spec_from_path(
        SPECS / "runtime/gate-loop.yaml", catalog=catalog, overrides={"root": str(tmp_path)}
    )
    plan = build_plan(spec, catalog, run_id=run_id, decisions=decisions)
    assert [s.state for s in plan.steps] == [state for launch in fake.submissions for state in launch]
    assert [b.key for b in plan.waves] == [w.key for w in outcome.summary.waves]
