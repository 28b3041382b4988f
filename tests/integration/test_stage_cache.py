"""The stage cache end to end on the local backend: jobs counted by the stages' own side effect.

Each stage appends its name to a launch log outside its outputs, so the log says
which stages really ran; outputs live under the run's own id, so a hit must copy
them there for the next stage to read.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.cache.messages import FlightQueue, FlightTicket
from npaflow.runtime.request import RunRequest
from npaflow.runtime.vocabulary import WaveStatus
from tests.harness import Harness, RunOutcome, replaced_worker, start_worker_process
from tests.helpers import COLD_WORKER_SECONDS, eventually
from tests.integration.fake_skypilot import FakeSkyPilotApi
from workflows_def import NpaflowCacheFlight, NpaWorkflowRun

pytestmark = pytest.mark.integration

STAGES = ("prep", "tokenize", "train", "evaluate", "report", "publish")


def chain_spec(
    root: Path,
    *,
    commands: dict[str, str] | None = None,
    seed: str = "s1",
    cache: str = "true",
    config: str = "{}",
) -> str:
    """Six cached states, each reading the previous one's output and writing its own."""
    commands = commands or {}
    states = []
    for index, name in enumerate(STAGES):
        source = f"{root}/{{{{run.id}}}}/{STAGES[index - 1]}/out.txt" if index else f"{root}/seed.txt"
        target = f"{root}/{{{{run.id}}}}/{name}/out.txt"
        body = commands.get(name, f"cat {source} > {target} && echo {name} >> {target}")
        nxt = f"next: {STAGES[index + 1]}" if index + 1 < len(STAGES) else "terminal: true"
        shell = f"mkdir -p {root}/{{{{run.id}}}}/{name} && {body} && echo {name} >> {root}/launches.log"
        states.append(
            f"  {name}:\n"
            f"    run: {{shell: '{shell}'}}\n"
            f"    inputs: [{{uri: '{source}'}}]\n"
            f"    outputs: [{{uri: '{target}'}}]\n"
            f"    cache: {cache}\n"
            f"    {nxt}\n"
        )
    (root / "seed.txt").write_text(seed + "\n")
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cache-chain}\n"
        f"config: {config}\ninitial: prep\nstates:\n{''.join(states)}"
    )


def launches(root: Path) -> list[str]:
    log = root / "launches.log"
    lines = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def cache_of(outcome: RunOutcome, state: str) -> dict[str, object]:
    assert outcome.ledger is not None
    (wave,) = [w for w in outcome.ledger.waves if w.states == [state]]
    (step,) = wave.cache
    return step.model_dump()


async def test_a_second_run_launches_nothing_and_has_byte_identical_outputs_at_its_own_uris(
    local_harness: Harness, tmp_path: Path
) -> None:
    spec = chain_spec(tmp_path)
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(spec, run_id="cache-one"))
        assert first.status == "succeeded", first.error
        assert launches(tmp_path) == list(STAGES)
        second = await local_harness.finish(await local_harness.start(spec, run_id="cache-two"))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == []
    for name in STAGES:
        assert (tmp_path / "cache-two" / name / "out.txt").read_bytes() == (
            tmp_path / "cache-one" / name / "out.txt"
        ).read_bytes()
        hit = cache_of(second, name)
        assert hit["hit"] and hit["source_run"] == "cache-one" and hit["source_job"]
    assert second.ledger is not None and all(w.status is WaveStatus.SUCCEEDED for w in second.ledger.waves)
    assert all(not w.job_id for w in second.ledger.waves)
    assert second.summary is not None and (second.summary.cache.hits, second.summary.cache.misses) == (6, 0)
    assert "cache: 6 hits (saved 0.0000 GPU-h), 0 misses" in second.summary.text_lines()


async def test_a_changed_command_reruns_that_state_and_the_states_whose_inputs_changed(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="edit-one"))
        launches(tmp_path)
        changed = {"report": f"echo new-report > {tmp_path}/{{{{run.id}}}}/report/out.txt"}
        second = await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, commands=changed), run_id="edit-two")
        )
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == ["report", "publish"]
    assert cache_of(second, "report")["reason"] == "no entry for this key"


async def test_new_content_in_an_input_at_the_same_uri_is_a_miss_for_the_state_that_reads_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="seed-one"))
        launches(tmp_path)
        await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, seed="s2"), run_id="seed-two")
        )
    assert launches(tmp_path) == list(STAGES)


async def test_a_deleted_cached_output_turns_the_hit_into_a_miss_that_names_it(
    local_harness: Harness, tmp_path: Path
) -> None:
    spec = chain_spec(tmp_path)
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(spec, run_id="gone-one"))
        launches(tmp_path)
        (tmp_path / "gone-one" / "train" / "out.txt").unlink()
        second = await local_harness.finish(await local_harness.start(spec, run_id="gone-two"))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == ["train"]  # rewritten with the same bytes, so evaluate hits again
    reason = str(cache_of(second, "train")["reason"])
    assert f"{tmp_path}/gone-one/train/out.txt: missing" in reason


async def test_a_failed_stage_is_never_reused(local_harness: Harness, tmp_path: Path) -> None:
    failing = {"train": "exit 3"}
    async with local_harness.worker():
        first = await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, commands=failing), run_id="fail-one")
        )
        assert first.status == "failed"
        launches(tmp_path)
        second = await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, commands=failing), run_id="fail-two")
        )
    assert second.status == "failed"
    assert launches(tmp_path) == []  # prep and tokenize hit; train's failure was not stored...
    assert second.ledger is not None
    (train,) = [w for w in second.ledger.waves if w.states == ["train"]]
    assert train.job_id and train.status is WaveStatus.FAILED  # ...so it ran again, and failed again


async def test_five_identical_runs_started_together_launch_each_cached_stage_once(
    local_harness: Harness, tmp_path: Path
) -> None:
    slow = {
        name: f"sleep 1 && cat {tmp_path}/seed.txt > {tmp_path}/{{{{run.id}}}}/{name}/out.txt"
        for name in STAGES[:1]
    }
    spec = chain_spec(tmp_path, commands=slow)
    async with local_harness.worker():
        handles = [await local_harness.start(spec, run_id=f"flight-{index}") for index in range(5)]
        outcomes = [await local_harness.finish(handle) for handle in handles]
    assert [o.status for o in outcomes] == ["succeeded"] * 5, [o.error for o in outcomes]
    assert sorted(launches(tmp_path)) == sorted(STAGES)
    hits = [cache_of(outcome, "prep")["hit"] for outcome in outcomes]
    assert hits.count(False) == 1 and hits.count(True) == 4


async def test_a_worker_killed_while_its_run_holds_a_key_causes_no_second_launch(
    env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    slow = {"prep": f"sleep 4 && cat {tmp_path}/seed.txt > {tmp_path}/{{{{run.id}}}}/prep/out.txt"}
    spec = chain_spec(tmp_path, commands=slow)
    task_queue = f"tq-flight-{uuid.uuid4().hex[:6]}"
    first = start_worker_process(env, home, task_queue)
    requests = [RunRequest(spec=spec, poll_seconds=0.2, transport_recovery_seconds=5) for _ in range(2)]
    holder = await env.client.start_workflow(
        NpaWorkflowRun.run, requests[0], id="kill-a", task_queue=task_queue
    )
    await eventually(
        lambda: next(iter((home / "local" / "jobs").glob("*/supervisor.json")), None),
        timeout=COLD_WORKER_SECONDS,
        what="the holder's prep job running",
    )
    waiter = await env.client.start_workflow(
        NpaWorkflowRun.run, requests[1], id="kill-b", task_queue=task_queue
    )
    async with replaced_worker(first, env, home, task_queue):
        results = await asyncio.wait_for(asyncio.gather(holder.result(), waiter.result()), timeout=120)
    assert [r.status for r in results] == ["succeeded", "succeeded"]
    assert sorted(launches(tmp_path)) == sorted(STAGES)  # every stage launched once, by either run


async def test_a_hit_on_the_skypilot_backend_launches_no_skypilot_job(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi, tmp_path: Path
) -> None:
    spec = (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: sky-cache}\ninitial: train\n"
        "states:\n  train:\n    run: {argv: [python, train.py]}\n"
        f"    outputs: [{{uri: '{tmp_path}/{{{{run.id}}}}/model/'}}]\n    cache: true\n    terminal: true\n"
    )
    (tmp_path / "sky-one" / "model").mkdir(parents=True)
    (tmp_path / "sky-one" / "model" / "weights.bin").write_bytes(b"w" * 64)  # what the fake job wrote
    async with fake_sky_harness.worker():
        first = await fake_sky_harness.finish(
            await fake_sky_harness.start(spec, run_id="sky-one", backend="skypilot")
        )
        second = await fake_sky_harness.finish(
            await fake_sky_harness.start(spec, run_id="sky-two", backend="skypilot")
        )
    assert (first.status, second.status) == ("succeeded", "succeeded"), (first.error, second.error)
    assert fake_sky.names() == ["sky-one-01-train"]
    assert (tmp_path / "sky-two" / "model" / "weights.bin").read_bytes() == b"w" * 64
    assert cache_of(second, "train")["source_job"] == "1"


async def test_an_unrelated_config_value_is_a_hit_and_a_cache_version_bump_a_miss(
    local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, config="{unused: a}"), run_id="ver-one")
        )
        launches(tmp_path)
        unrelated = await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, config="{unused: b}"), run_id="ver-two")
        )
        assert (unrelated.status, launches(tmp_path)) == ("succeeded", [])
        bumped = await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, cache="{version: '2'}"), run_id="ver-three")
        )
    assert bumped.status == "succeeded", bumped.error
    assert launches(tmp_path) == list(STAGES)


def one_stage(
    root: Path, *, accelerator: str = "H100:1", image: str = "registry/train:1", lr: str = "0.1"
) -> str:
    out = f"{root}/{{{{run.id}}}}/out.txt"
    log = f"{root}/launches.log"
    shell = f"mkdir -p {root}/{{{{run.id}}}} && echo {{{{config.lr}}}} > {out} && echo train >> {log}"
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: one-stage}\n"
        f"config: {{lr: '{lr}', unused: x}}\n"
        f"resources:\n  gpu: {{accelerators: '{accelerator}', image: '{image}'}}\n"
        f"initial: train\nstates:\n  train:\n    run: {{shell: '{shell}'}}\n    resources: gpu\n"
        f"    outputs: [{{uri: '{root}/{{{{run.id}}}}/out.txt'}}]\n    cache: true\n    terminal: true\n"
    )


async def test_an_accelerator_an_image_or_a_used_config_value_is_a_miss_and_a_secret_value_a_hit(
    local_harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAIN_TOKEN", "first-secret")
    runs = [
        ("base", one_stage(tmp_path), ["train"]),
        ("secret", one_stage(tmp_path), []),  # only the secret's value changes (below): a hit
        ("accelerator", one_stage(tmp_path, accelerator="A100:1"), ["train"]),
        ("image", one_stage(tmp_path, image="registry/train:2"), ["train"]),
        ("config", one_stage(tmp_path, lr="0.2"), ["train"]),
    ]
    async with local_harness.worker():
        for name, spec, expected in runs:
            if name == "secret":
                monkeypatch.setenv("TRAIN_TOKEN", "second-secret")
            outcome = await local_harness.finish(
                await local_harness.start(spec, run_id=f"what-{name}", secret_env=["TRAIN_TOKEN"])
            )
            assert outcome.status == "succeeded", (name, outcome.error)
            assert launches(tmp_path) == expected, name


async def test_a_flight_continued_as_new_keeps_its_holder_and_its_queue(local_harness: Harness) -> None:
    queue = FlightQueue(holder="run-holding", waiting=["run-waiting"], passed_over=["run-waiting"])
    async with local_harness.worker():
        handle = await local_harness.client.start_workflow(
            NpaflowCacheFlight.run,
            args=["sha256:" + "0" * 64, queue],
            id=f"flight-{uuid.uuid4().hex[:6]}",
            task_queue=local_harness.task_queue,
        )
        assert await handle.query(NpaflowCacheFlight.holding) == ["run-holding", "run-waiting"]
        await handle.signal(NpaflowCacheFlight.release, FlightTicket(run_id="run-holding", key="k"))
        # the waiting run does not exist, so its grant cannot be delivered: it is dropped, not held
        await eventually(lambda: _empty(handle), timeout=30, what="the flight to drop a waiter that is gone")


async def _empty(handle: object) -> bool | None:
    holding = await handle.query(NpaflowCacheFlight.holding)  # type: ignore[attr-defined]
    return True if holding == [""] else None


def rewrite_in_place_keeping_size_and_mtime(path: Path, text: str) -> None:
    """What `cp -p`, `rsync -t`, `tar -x` or `touch -r` leave: new bytes, same inode, size and mtime."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    with open(path, "r+b") as stream:
        stream.write(text.encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


async def test_an_input_rewritten_in_place_with_its_size_and_mtime_kept_is_a_miss_for_its_reader(
    local_harness: Harness, tmp_path: Path
) -> None:
    spec = chain_spec(tmp_path, seed="alpha")
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(spec, run_id="meta-one"))
        assert launches(tmp_path) == list(STAGES)
        rewrite_in_place_keeping_size_and_mtime(tmp_path / "seed.txt", "bravo\n")
        second = await local_harness.finish(await local_harness.start(spec, run_id="meta-two"))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == list(STAGES)
    assert cache_of(second, "prep")["key"] != cache_of(first, "prep")["key"]
    assert cache_of(second, "prep")["reason"] == "no entry for this key"
    assert (tmp_path / "meta-two" / "publish" / "out.txt").read_text().startswith("bravo\n")


async def test_a_cached_output_tampered_in_place_keeping_size_and_mtime_is_a_miss_on_the_same_worker(
    local_harness: Harness, tmp_path: Path
) -> None:
    spec = chain_spec(tmp_path)
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(spec, run_id="tamper-one"))
        assert launches(tmp_path) == list(STAGES)
        produced = tmp_path / "tamper-one" / "prep" / "out.txt"
        original = produced.read_text()
        rewrite_in_place_keeping_size_and_mtime(produced, original.replace("s1", "XX"))
        second = await local_harness.finish(await local_harness.start(spec, run_id="tamper-two"))
    assert second.status == "succeeded", second.error
    assert launches(tmp_path) == ["prep"]  # its rerun wrote what the entry vouched for: the rest hit
    reason = str(cache_of(second, "prep")["reason"])
    assert str(produced) in reason and "changed" in reason, reason
    assert (tmp_path / "tamper-two" / "prep" / "out.txt").read_text() == original


def batch_spec(root: Path, members: int, *, edited: str = "") -> str:
    """One parallel batch of cached members (maxConcurrency = members); `edited` runs another command."""
    names = [f"m{index:02d}" for index in range(members)]
    bodies = []
    for name in names:
        word = "edited" if name == edited else "v1"
        target = f"{root}/{{{{run.id}}}}/{name}.txt"
        log = f"echo {name} >> {root}/launches.log"
        shell = f"mkdir -p {root}/{{{{run.id}}}} && echo {name}-{word} > {target} && {log}"
        bodies.append(
            f"  {name}:\n    run: {{shell: '{shell}'}}\n    outputs: [{{uri: '{target}'}}]\n    cache: true\n"
        )
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: cache-batch}\n"
        f"initial: group\nstates:\n  group:\n    parallel: [{', '.join(names)}]\n"
        f"    maxConcurrency: {members}\n    next: done\n"
        "  done:\n    terminal: true\n    run: {shell: 'true'}\n" + "".join(bodies)
    )


@pytest.mark.parametrize("members", [2, 3, 50])
async def test_cached_members_of_one_batch_miss_hit_and_mix_launching_only_their_misses_together(
    local_harness: Harness, tmp_path: Path, members: int
) -> None:
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(batch_spec(tmp_path, members)))
        assert first.status == "succeeded", first.error
        assert sorted(launches(tmp_path)) == [f"m{i:02d}" for i in range(members)]
        hit = await local_harness.finish(await local_harness.start(batch_spec(tmp_path, members)))
        assert hit.status == "succeeded", hit.error
        assert launches(tmp_path) == []
        mixed = await local_harness.finish(
            await local_harness.start(batch_spec(tmp_path, members, edited="m01"), run_id="mixed-batch")
        )
    assert mixed.status == "succeeded", mixed.error
    assert launches(tmp_path) == ["m01"]
    assert mixed.ledger is not None
    (wave,) = [w for w in mixed.ledger.waves if "m01" in w.states]
    assert wave.job_id and len(wave.states) == members  # one job for the batch: its one miss
    assert [t.task_name for t in wave.tasks] == ["m01"] or len(wave.tasks) == 1
    by_state = {step.state: step for step in wave.cache}
    assert not by_state["m01"].hit and by_state["m01"].stored
    assert all(by_state[f"m{i:02d}"].hit for i in range(members) if i != 1)
    for index in range(members):
        word = "edited" if index == 1 else "v1"
        assert (tmp_path / "mixed-batch" / f"m{index:02d}.txt").read_text() == f"m{index:02d}-{word}\n"


def salted_spec(log_dir: Path) -> str:
    """One cached state writing config.salt under config.root; each real run appends to a log."""
    shell = (
        "mkdir -p {{config.root}}/{{run.id}} && echo {{config.salt}} > {{config.root}}/{{run.id}}/out.txt"
        f" && echo work >> {log_dir}/launches.log"
    )
    return (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: salted}\n"
        "config: {root: /tmp/unset, salt: none}\ninitial: work\nstates:\n"
        f"  work:\n    run: {{shell: '{shell}'}}\n"
        "    outputs: [{uri: '{{config.root}}/{{run.id}}/out.txt'}]\n    cache: true\n    terminal: true\n"
    )


async def test_a_config_value_holding_the_run_id_keys_as_that_value_so_no_other_run_is_served(
    local_harness: Harness, tmp_path: Path
) -> None:
    prefix = f"r{uuid.uuid4().hex[:5]}"
    spec = salted_spec(tmp_path)
    async with local_harness.worker():
        for name in ("alpha", "bravo"):
            run_id = f"{prefix}-{name}"
            variables = {"root": str(tmp_path), "salt": f"{run_id}-x"}
            outcome = await local_harness.finish(
                await local_harness.start(spec, run_id=run_id, vars=variables)
            )
            assert outcome.status == "succeeded", outcome.error
    assert launches(tmp_path) == ["work", "work"]
    assert (tmp_path / f"{prefix}-bravo" / "out.txt").read_text() == f"{prefix}-bravo-x\n"
    assert not cache_of(outcome, "work")["hit"]


async def test_two_runs_whose_config_path_contains_one_of_their_ids_share_one_flight_and_one_launch(
    local_harness: Harness, tmp_path: Path
) -> None:
    prefix = f"s{uuid.uuid4().hex[:4]}"
    root = tmp_path / f"{prefix}-0123" / "root"
    spec = salted_spec(tmp_path)
    async with local_harness.worker():
        handles = [
            await local_harness.start(spec, run_id=f"{prefix}-{n}", vars={"root": str(root), "salt": "same"})
            for n in (0, 1)
        ]
        outcomes = await asyncio.gather(*(local_harness.finish(handle) for handle in handles))
    assert [o.status for o in outcomes] == ["succeeded", "succeeded"], [o.error for o in outcomes]
    assert launches(tmp_path) == ["work"]
    keys = {cache_of(o, "work")["key"] for o in outcomes}
    assert len(keys) == 1 and sorted(bool(cache_of(o, "work")["hit"]) for o in outcomes) == [False, True]


def damage(entry: Path, how: str) -> None:
    """Leave something at an entry's place that no store could have written whole."""
    entry.unlink()
    if how == "not-utf8":
        entry.write_bytes(b'{"key": "\xff\xfe broken')
    elif how == "truncated":
        entry.write_text('{"key": "sha256:')
    elif how == "fifo":
        os.mkfifo(entry)
    else:
        (entry / "inside").mkdir(parents=True)


@pytest.mark.parametrize("how", ["not-utf8", "truncated", "fifo", "directory"])
async def test_a_damaged_entry_is_a_miss_that_names_it_and_the_next_success_replaces_it(
    local_harness: Harness, tmp_path: Path, how: str
) -> None:
    spec = salted_spec(tmp_path)
    variables = {"root": str(tmp_path), "salt": "s"}
    async with local_harness.worker():
        first = await local_harness.finish(await local_harness.start(spec, vars=variables))
        entry = Path(str(cache_of(first, "work")["entry"]).removeprefix("file://"))
        damage(entry, how)
        healed = await local_harness.finish(await local_harness.start(spec, vars=variables))
        after = await local_harness.finish(await local_harness.start(spec, vars=variables))
    assert [first.status, healed.status, after.status] == ["succeeded"] * 3, healed.error
    assert launches(tmp_path) == ["work", "work"]  # the damaged entry reran once, then hit
    missed = cache_of(healed, "work")
    assert not missed["hit"] and "damaged entry at" in str(missed["reason"]) and missed["stored"]
    assert entry.is_file() and json.loads(entry.read_text())["source_run"] == healed.handle.id
    assert cache_of(after, "work")["hit"]
