"""Each shipped example spec plans as documented under both assumptions."""

from __future__ import annotations

import pytest

from tests.helpers import EXAMPLES, plan_of, states_of

pytestmark = pytest.mark.unit

GATE_BODY = ["caption-batch", "score-batch", "quality-gate"]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
@pytest.mark.parametrize("assume", ["promote_checkpoint", "loop_back"])
def test_every_example_plans_and_folds_into_waves(name: str, assume: str) -> None:
    plan = plan_of(name, assume)
    assert plan.steps
    assert sum(len(w.steps) for w in plan.occurrences()) == len(plan.steps)
    assert all(step.has_command() for step in plan.steps)


def test_gate_loop_example_exits_early_on_promote() -> None:
    assert states_of(plan_of("gate-loop.yaml", "promote_checkpoint")) == [*GATE_BODY, "route", "publish"]


def test_gate_loop_example_runs_the_full_budget_on_loop_back() -> None:
    assert states_of(plan_of("gate-loop.yaml", "loop_back")) == GATE_BODY * 3 + ["route", "escalate"]


def test_parallel_sweep_example_batches_four_members_two_at_a_time() -> None:
    waves = plan_of("parallel-sweep.yaml").occurrences()
    assert [(w.kind.value, w.name, len(w.steps)) for w in waves] == [
        ("parallel", "sweep", 4),
        ("serial", "select-best", 1),
    ]
    assert [len(b.steps) for b in waves[0].batches] == [2, 2]
    shells = [s.shell for s in waves[0].steps]
    assert len(set(shells)) == 4
    assert sum("learning_rate=1.0e-3" in s for s in shells) == 1


def test_fan_out_join_example_reads_every_shard_at_the_barrier() -> None:
    join = plan_of("fan-out-join.yaml").steps[-1]
    assert join.state == "join"
    assert sum("/shards/" in arg for arg in join.argv) == 3


def test_trigger_example_plans_without_waiting() -> None:
    assert states_of(plan_of("trigger-watch.yaml")) == ["produce", "ingest"]


def test_gang_example_asks_for_two_nodes() -> None:
    assert plan_of("gang.yaml").steps[0].resources_profile["num_nodes"] == "2"


@pytest.mark.parametrize(("assume", "rollouts"), [("promote_checkpoint", 2), ("loop_back", 6)])
def test_nested_loop_example_multiplies_inner_and_outer_iterations(assume: str, rollouts: int) -> None:
    plan = plan_of("nested-loop.yaml", assume)
    assert states_of(plan).count("rollout") == rollouts
    assert states_of(plan)[-1] == "finalize"


def test_shard_fan_out_example_plans_its_group_as_a_template_over_the_list_a_stage_writes() -> None:
    plan = plan_of("shard-fan-out.yaml")
    (wave,) = [w for w in plan.waves if w.group == "tokenize"]
    assert wave.fan_out is not None and not wave.fan_out.known
    assert wave.fan_out.items_uri.endswith("/plan-run/shards.json") and wave.fan_out.count == 100
    assert states_of(plan) == ["generate", "tokenize-shard", "report"]
