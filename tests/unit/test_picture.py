"""The picture of a spec and of a run: a layout that reads well, nodes coloured from the ledger."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npaflow.catalog.load import load_catalogs
from npaflow.document.models import WorkflowSpec
from npaflow.picture import NodePhase, node_views, spec_layout, spec_svg
from npaflow.picture.blocks import BlockKind, spec_blocks
from npaflow.picture.geometry import PAD, text_width
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.ledger.models import RuntimeLedger
from npaflow.runtime.vocabulary import LedgerStatus, WaveStatus
from npaflow.shipped import STARTER_SPEC
from npaflow.spec.load import load_spec_from_path, load_spec_from_str
from npaflow.waves import WaveKey
from tests.helpers import EXAMPLES, ROOT

SHIPPED = [*sorted(EXAMPLES.glob("*.yaml")), STARTER_SPEC]


def load(path: Path) -> WorkflowSpec:
    return load_spec_from_path(path, catalog=load_catalogs())


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_no_edge_of_a_shipped_example_crosses_a_node_or_a_box_it_does_not_connect(path: Path) -> None:
    layout = spec_layout(load(path))
    containers = {name: {inner.name for inner in block.walk()} for name, block in layout.blocks.items()}
    for route in layout.routes:
        ends = {route.source, route.target}
        for name, box in layout.boxes.items():
            if name in ends or ends & containers.get(name, set()):
                continue  # its own ends, and the boxes they sit in
            for a, b in route.segments():
                assert not box.crossed_by(a, b), f"{route.source} -> {route.target} crosses {name}"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_member_is_drawn_inside_its_container_and_siblings_do_not_overlap(path: Path) -> None:
    layout = spec_layout(load(path))
    for block in layout.blocks.values():
        outer = layout.boxes[block.name]
        members = [layout.boxes[m.name] for m in block.members()]
        for box in members:
            assert (
                outer.x < box.x and box.right < outer.right and outer.y < box.y and box.bottom < outer.bottom
            )
        for i, one in enumerate(members):
            for other in members[i + 1 :]:
                apart = one.right <= other.x or other.right <= one.x
                assert apart or one.bottom <= other.y or other.bottom <= one.y


def test_a_loop_box_is_wide_enough_for_its_caption_at_its_last_iteration() -> None:
    text = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: many}
initial: a
states:
  a: {sequence: [b], loop: {max: 300}, next: c}
  b: {run: {shell: "true"}}
  c: {run: {shell: "true"}, terminal: true}
"""
    layout = spec_layout(load_spec_from_str(text, "many.yaml", catalog=load_catalogs()))
    caption = layout.blocks["a"].caption() + " · iteration 300"  # what a live page draws at the end
    assert layout.boxes["a"].w >= text_width(caption) + 2 * PAD


def test_the_graph_reads_left_to_right_from_the_start_to_the_terminals() -> None:
    layout = spec_layout(load(ROOT / "specs/examples/gate-loop.yaml"))
    x = {name: layout.boxes[name].x for name in ("__start__", "refine", "route", "publish", "escalate")}
    assert x["__start__"] < x["refine"] < x["route"] < x["publish"] == x["escalate"]


def test_a_group_with_max_concurrency_draws_one_column_per_batch_with_a_barrier_between() -> None:
    layout = spec_layout(load(ROOT / "specs/examples/parallel-sweep.yaml"))
    columns = {layout.boxes[name].x for name in ("lr-1e-2", "lr-3e-3", "lr-1e-3", "lr-3e-4")}
    assert len(columns) == 2 and len(layout.barriers) == 1


SKIPPING = """
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: skipping}
initial: gate
states:
  gate:
    writesDecision: true
    params: {decision_uri: "file:///tmp/decision.json"}
    run: {shell: "true"}
    transitions:
      - {when: promote_checkpoint, goto: last}
      - {when: loop_back, goto: middle}
  middle: {run: {shell: "true"}, next: last}
  last: {run: {shell: "true"}, terminal: true}
"""


def test_an_edge_that_skips_a_column_runs_in_a_lane_above_every_block() -> None:
    layout = spec_layout(load_spec_from_str(SKIPPING, catalog=load_catalogs()))
    (skip,) = [r for r in layout.routes if (r.source, r.target) == ("gate", "last")]
    lane = min(y for _, y in skip.points)
    assert all(lane < box.y for box in layout.boxes.values())


def wave(
    key: str, status: WaveStatus, attempt: int = 1, job_id: str = "7", error: str = ""
) -> WaveAttemptRecord:
    return WaveAttemptRecord(
        key=WaveKey.parse(key), status=status, attempt=attempt, job_id=job_id, error=error
    )


def ledger(status: LedgerStatus, *waves: WaveAttemptRecord) -> RuntimeLedger:
    return RuntimeLedger(workflow="gate", run_id="r-1", api_version="v", status=status, waves=list(waves))


def test_nodes_show_their_newest_attempt_and_states_never_reached_are_skipped_once_the_run_ends() -> None:
    blocks = spec_blocks(load(ROOT / "specs/examples/gate-loop.yaml"))
    views = node_views(
        blocks,
        ledger(
            LedgerStatus.FAILED,
            wave("001|serial|refine:caption-batch:1", WaveStatus.SUCCEEDED),
            wave("002|serial|refine:score-batch:1", WaveStatus.FAILED, error="exit 3"),
            wave("002|serial|refine:score-batch:1", WaveStatus.FAILED, attempt=2, job_id="8", error="exit 3"),
        ),
    )
    assert views["caption-batch"].phase is NodePhase.SUCCEEDED
    assert (views["score-batch"].phase, views["score-batch"].attempts) == (NodePhase.FAILED, 2)
    assert views["score-batch"].job_ids == ["7", "8"] and views["score-batch"].error == "exit 3"
    assert views["publish"].phase is NodePhase.SKIPPED
    assert views["refine"].phase is NodePhase.FAILED and views["refine"].iteration == 1


def test_an_open_run_shows_unreached_states_pending_and_what_a_state_waits_for() -> None:
    blocks = spec_blocks(load(ROOT / "specs/examples/gate-loop.yaml"))
    views = node_views(
        blocks,
        ledger(LedgerStatus.RUNNING, wave("001|serial|refine:caption-batch:2", WaveStatus.RUNNING)),
        waiting={"score-batch": "waiting for quota gpu16"},
    )
    assert views["caption-batch"].phase is NodePhase.RUNNING and views["caption-batch"].iteration == 2
    assert views["score-batch"].phase is NodePhase.WAITING
    assert views["publish"].phase is NodePhase.PENDING
    assert views["refine"].phase is NodePhase.RUNNING


def test_the_svg_marks_each_node_with_its_state_and_phase_and_carries_no_external_reference() -> None:
    spec = load(ROOT / "specs/examples/gate-loop.yaml")
    svg = spec_svg(spec)
    phases = dict(re.findall(r'data-state="([^"]+)" data-phase="([^"]+)"', svg))
    assert set(phases) == set(spec.states) and set(phases.values()) == {"pending"}
    assert not re.search(r"(?:href|src)=\"(?!#)|url\((?!#)|@import", svg)


def test_blocks_know_their_kind_and_batches() -> None:
    blocks = {b.name: b for b in spec_blocks(load(ROOT / "specs/examples/parallel-sweep.yaml"))}
    sweep = blocks["sweep"]
    assert sweep.kind is BlockKind.PARALLEL and [len(batch) for batch in sweep.batches] == [2, 2]


def test_a_live_run_waiting_for_its_trigger_or_for_quota_shows_those_states_waiting() -> None:
    from npaflow.picture.live import ledger_of_view, waiting_states
    from npaflow.runtime.summary import RunStatusView
    from npaflow.runtime.vocabulary import RunPhase

    spec = load(EXAMPLES / "trigger-watch.yaml")
    view = RunStatusView(
        run_id="t-1", workflow="trigger-watch", phase=RunPhase.RUNNING, current_states=["ingest"]
    )
    waiting = waiting_states(view, spec)
    views = node_views(spec_blocks(spec), ledger_of_view(view), waiting)
    assert views["ingest"].phase is NodePhase.WAITING and "trigger" in views["ingest"].detail
    from npaflow.runtime.quota_waits import QuotaWait

    wait = QuotaWait(id="w", pool="g", wave="001|serial|:produce:-", gpus=8, queued_at="2026-12-06T00:00:00Z")
    done = wait.model_copy(update={"id": "v", "wave": "002|serial|:other:-", "granted_at": "x"})
    quota = view.model_copy(update={"quota_waits": [wait, done]})
    assert waiting_states(quota)["produce"].startswith("waiting for quota g: needs 8 GPUs")
    assert "other" not in waiting_states(quota)  # a wait that ended says nothing of now


def test_a_page_says_in_text_what_a_waiting_run_waits_for_in_its_header_and_timeline() -> None:
    from npaflow.picture.live import ledger_of_view, waiting_states
    from npaflow.picture.report import run_sections
    from npaflow.runtime.quota_waits import QuotaWait
    from npaflow.runtime.summary import RunStatusView
    from npaflow.runtime.vocabulary import RunPhase

    spec = load(EXAMPLES / "trigger-watch.yaml")
    wait = QuotaWait(
        id="w", pool="g<b>", wave="001|serial|:produce:-", gpus=2, in_use=2, capacity=3, position=1,
        queued_at="2026-12-06T00:00:00Z",
    )  # fmt: skip
    view = RunStatusView(run_id="t-1", workflow="trigger-watch", phase=RunPhase.RUNNING, quota_waits=[wait])
    sections = run_sections(spec, ledger_of_view(view), now=0.0, waiting=waiting_states(view, spec))
    said = "waiting for quota g&lt;b&gt;: needs 2 GPUs, 2 of 3 GPUs in use, position 1"
    assert f'<p class="waiting" id="run-waiting">{said}' in sections["meta"]
    assert "phase-waiting" in sections["timeline"] and said in sections["timeline"]  # the wait's own bar
    bare = view.model_copy(update={"quota_waits": []})
    trigger = run_sections(spec, ledger_of_view(bare), now=0.0, waiting=waiting_states(bare, spec))
    assert trigger["timeline"].startswith("<p>Nothing launched")
