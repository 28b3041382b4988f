"""Decision contract and triggers at runtime (reference §11.2 cases 35–37, 52–54, 56)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend

pytestmark = pytest.mark.integration


def write_artifact(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_missing_decision_artifact_falls_back_to_the_assumption(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    outcome = await harness.run(
        "runtime/branch.yaml", run_id="rt-fallback", vars={"root": str(tmp_path)}, assume_decision="promote"
    )
    assert outcome.status == "succeeded"
    last = outcome.summary.decisions[-1]
    assert (last.source, last.decision) == ("assume_decision_fallback", "promote_checkpoint")
    assert fake.submissions == [["route"], ["publish"]]


async def test_missing_decision_without_an_assumption_fails(harness: Harness, tmp_path: Path) -> None:
    outcome = await harness.run("runtime/branch.yaml", run_id="rt-missing", vars={"root": str(tmp_path)})
    assert outcome.status == "failed"
    assert "decision artifact" in outcome.error and "does not exist" in outcome.error


async def test_corrupt_decision_artifact_fails_the_run(harness: Harness, tmp_path: Path) -> None:
    write_artifact(tmp_path, "rt-corrupt/route/decision.json", "{not json")
    outcome = await harness.run(
        "runtime/branch.yaml", run_id="rt-corrupt", vars={"root": str(tmp_path)}, assume_decision="promote"
    )
    assert outcome.status == "failed"
    assert outcome.ledger.decisions[-1].decode_error


@pytest.mark.parametrize("kind", ["nested-50000-deep", "fifo", "device", "2-mib"])
async def test_a_decision_that_cannot_be_one_fails_the_run_at_once_and_is_recorded(
    harness: Harness, fake: FakeBackend, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "rt-hostile/route/decision.json"
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "2-mib":
        path.write_text(json.dumps({"decision": "promote", "pad": "x" * 2 * 1024 * 1024}))
    else:
        path.write_text("[" * 50_000 + "]" * 50_000)
    outcome = await asyncio.wait_for(
        harness.run("runtime/branch.yaml", run_id="rt-hostile", vars={"root": str(tmp_path)}), 60
    )
    assert outcome.status == "failed"
    assert outcome.ledger.decisions[-1].decode_error, outcome.error
    assert fake.submissions == [["route"]]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"decision": ""}', "gives an empty decision"),
        ('{"decision": null, "score": 3}', "gives an empty decision"),
        ('{"decision": "promote", "decision": "loop_back"}', "gives 'decision' 2 times"),
    ],
)
async def test_an_artifact_that_decides_nothing_or_twice_fails_the_run_instead_of_taking_a_branch(
    harness: Harness, fake: FakeBackend, tmp_path: Path, body: str, says: str
) -> None:
    write_artifact(tmp_path, "rt-undecided/route/decision.json", body)
    outcome = await harness.run("runtime/branch.yaml", run_id="rt-undecided", vars={"root": str(tmp_path)})
    assert outcome.status == "failed" and says in outcome.error
    assert outcome.ledger.decisions[-1].decode_error
    assert fake.submissions == [["route"]]


async def test_an_empty_decision_falls_back_to_an_explicit_assumption_recorded_as_such(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    write_artifact(tmp_path, "rt-empty-fallback/route/decision.json", '{"decision": ""}')
    outcome = await harness.run(
        "runtime/branch.yaml",
        run_id="rt-empty-fallback",
        vars={"root": str(tmp_path)},
        assume_decision="promote",
    )
    assert outcome.status == "succeeded"
    last = outcome.summary.decisions[-1]
    assert (last.source, last.decision) == ("assume_decision_fallback", "promote_checkpoint")
    assert fake.submissions == [["route"], ["publish"]]


async def test_unmatched_decision_without_next_fails_naming_the_state(
    harness: Harness, tmp_path: Path
) -> None:
    write_artifact(tmp_path, "rt-weird/route/decision.json", json.dumps({"decision": "PROMOTE"}))
    outcome = await harness.run("runtime/branch.yaml", run_id="rt-weird", vars={"root": str(tmp_path)})
    assert outcome.status == "failed"
    assert "state route: decision 'PROMOTE' matched no transition" in outcome.error


async def test_trigger_waits_for_objects_then_runs(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    async with harness.worker():
        handle = await harness.start("runtime/trigger.yaml", vars={"root": str(tmp_path), "max_polls": "10"})
        (inbox / "a.json").write_text("{}")
        outcome = await harness.finish(handle)
    assert outcome.status == "succeeded"
    assert outcome.summary.watermarks["ingest"].objects == 1
    assert fake.submissions == [["ingest"]]


async def test_trigger_gives_up_after_max_polls(harness: Harness, fake: FakeBackend, tmp_path: Path) -> None:
    outcome = await harness.run("runtime/trigger.yaml", vars={"root": str(tmp_path), "max_polls": "2"})
    assert outcome.status == "failed"
    assert "trigger" in outcome.error and "after 2 poll(s)" in outcome.error
    assert fake.launches == []


async def test_trigger_is_bounded_by_the_run_deadline(harness: Harness, tmp_path: Path) -> None:
    outcome = await harness.run(
        "runtime/trigger.yaml", vars={"root": str(tmp_path), "max_polls": "0"}, max_wait_seconds=2
    )
    assert outcome.status == "failed"
    assert "after waiting 2s" in outcome.error


async def test_ledger_persists_waves_and_decisions(harness: Harness, tmp_path: Path) -> None:
    write_artifact(tmp_path, "rt-ledger/iteration-1/decision.json", json.dumps({"decision": "promote"}))
    outcome = await harness.run("runtime/gate-loop.yaml", run_id="rt-ledger", vars={"root": str(tmp_path)})
    assert outcome.summary.runtime_state_uri.endswith("/npa-workflow/runtime.json")
    ledger = outcome.ledger
    assert (ledger.schema_version, ledger.status.value) == ("npa.workflow.runtime.v1", "succeeded")
    assert [w.states for w in ledger.waves] == [["work"], ["gate"], ["publish"]]
    assert ledger.decisions[-1].decision == "promote_checkpoint"
    assert ledger.decisions[-1].uri.endswith("/iteration-1/decision.json")
    assert [s.stage for s in ledger.stages] == ["work", "gate", "publish"]
    run_dir = harness.home / "runs" / "rt-ledger"
    import yaml

    submitted = yaml.safe_load((run_dir / "workflow.yaml").read_text())
    assert submitted["config"]["root"] == str(tmp_path)  # --var overrides merged into config
    # status.json repeats the manifest's status, as the reference writes it
    assert json.loads((run_dir / "npa-workflow" / "status.json").read_text())["status"] == "completed"
    manifest = json.loads((run_dir / "npa-workflow" / "manifest.json").read_text())
    assert manifest["schema_version"] == "npa.workflow.run.v1"
    assert manifest["status"] == "completed"


async def test_declared_output_checker_keeps_the_schema_in_the_ledger(
    harness: Harness, tmp_path: Path
) -> None:
    write_artifact(tmp_path, "rt-schema/iteration-1/decision.json", json.dumps({"decision": "promote"}))
    outcome = await harness.run("runtime/gate-loop.yaml", run_id="rt-schema", vars={"root": str(tmp_path)})
    gate = outcome.ledger.waves[1]
    assert [o.model_dump(by_alias=True) for o in gate.outputs] == [
        {
            "uri": f"file://{tmp_path}/rt-schema/iteration-1/decision.json",
            "schema": "npa.sim2real.threshold_decision.v1",
        }
    ]


async def test_a_single_state_loop_reads_its_declared_decision(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    write_artifact(tmp_path, "rt-probe/probe-1.json", json.dumps({"decision": "loop_back"}))
    write_artifact(tmp_path, "rt-probe/probe-2.json", json.dumps({"decision": "promote"}))
    outcome = await harness.run(
        "runtime/single-state-loop.yaml", run_id="rt-probe", vars={"root": str(tmp_path)}
    )
    assert outcome.status == "succeeded"
    assert fake.submissions == [["probe-1"], ["probe-2"], ["done"]]
    assert [d.uri.rsplit("/", 1)[-1] for d in outcome.summary.decisions] == ["probe-1.json", "probe-2.json"]


async def test_runtime_execution_mode_rejects_an_assumption_for_runs(
    harness: Harness, fake: FakeBackend
) -> None:
    outcome = await harness.run("runtime/single-state-loop.yaml", assume_decision="promote")
    assert outcome.status != "succeeded"
    assert "executionMode is 'runtime'" in outcome.error
    assert fake.launches == []


async def test_a_router_with_no_decision_source_fails_the_run_before_anything_launches(
    harness: Harness, fake: FakeBackend
) -> None:
    outcome = await harness.run("runtime/unsourced-router.yaml", run_id="rt-unsourced")
    assert outcome.status == "failed"
    assert "state route" in outcome.error and "no decision source" in outcome.error
    assert "--assume-decision" in outcome.error
    assert fake.submissions == []


async def test_an_explicit_assumption_decides_an_unsourced_router_and_is_recorded_as_one(
    harness: Harness, fake: FakeBackend
) -> None:
    outcome = await harness.run(
        "runtime/unsourced-router.yaml", run_id="rt-assumed", assume_decision="promote"
    )
    assert outcome.status == "succeeded", outcome.error
    assert fake.submissions == [["gate"], ["route"], ["publish"]]
    (record,) = outcome.ledger.decisions
    assert (record.state, record.uri, record.source, record.decision) == (
        "route",
        "",
        "assume_decision",
        "promote_checkpoint",
    )


async def test_a_resumed_run_keeps_the_decisions_its_earlier_execution_took_and_adds_the_new_ones(
    harness: Harness, fake: FakeBackend, tmp_path: Path
) -> None:
    from tests.integration.test_continue_as_new import chain_with_a_loop

    spec, options = chain_with_a_loop(1), {"run_id": "rt-kept", "vars": {"root": str(tmp_path)}}
    write_artifact(tmp_path, "decision.json", '{"decision": "loop_back"}')
    fake.scripts = [["SUCCEEDED"], ["SUCCEEDED"], ["FAILED"]]  # s00, gate #1, gate #2 fails
    failed = await harness.run(spec, **options)
    assert failed.status == "failed" and failed.ledger is not None
    assert [d.decision for d in failed.ledger.decisions] == ["loop_back_to_inner_loop"]
    write_artifact(tmp_path, "decision.json", '{"decision": "promote"}')
    resumed = await harness.run(spec, **options)
    assert resumed.status == "succeeded" and resumed.ledger is not None and resumed.summary is not None
    taken = ["loop_back_to_inner_loop", "promote_checkpoint"]
    # the second decision follows the first in the ledger (it was written over it)
    assert [d.decision for d in resumed.ledger.decisions] == taken
    assert [d.decision for d in resumed.summary.decisions] == taken
    assert resumed.ledger.decisions[0] == failed.ledger.decisions[0]


async def test_a_resumed_run_replays_its_assumed_decision_without_recording_it_twice(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.scripts = [["SUCCEEDED"], ["SUCCEEDED"], ["FAILED"]]  # gate, route, publish fails
    options = {"run_id": "rt-assumed-again", "assume_decision": "promote"}
    failed = await harness.run("runtime/unsourced-router.yaml", **options)
    assert failed.status == "failed" and failed.ledger is not None
    await asyncio.sleep(1.1)  # a decision taken again now would carry a later read_at
    resumed = await harness.run("runtime/unsourced-router.yaml", **options)
    assert resumed.status == "succeeded" and resumed.ledger is not None
    assert fake.submissions == [["gate"], ["route"], ["publish"], ["publish"]]
    assert resumed.ledger.decisions == failed.ledger.decisions  # one assumption, as first recorded
