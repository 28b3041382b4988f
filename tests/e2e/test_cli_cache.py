"""`npaflow cache list | explain | purge` end to end, through a worker."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness
from tests.integration.test_stage_cache import chain_spec

pytestmark = pytest.mark.e2e


async def test_list_explain_and_purge_the_entries_of_a_scope(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    edited = {"report": f"echo new > {tmp_path}/{{{{run.id}}}}/report/out.txt"}
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="cli-one"))
        await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, commands=edited), run_id="cli-two")
        )
        listed = await npaflow(env, local_harness, "cache", "list", "--scope", "cache-chain")
        explained = await npaflow(env, local_harness, "cache", "explain", "cli-two", "--state", "report")
        unknown = await npaflow(env, local_harness, "cache", "explain", "cli-two", "--state", "nope")
        refused = await npaflow(env, local_harness, "cache", "purge")
        purged = await npaflow(env, local_harness, "cache", "purge", "--scope", "cache-chain")
        emptied = await npaflow(env, local_harness, "cache", "list", "--scope", "cache-chain")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("8 entries under ")  # six stages, then report and publish again
    assert "cache-chain/report" in listed.stdout and "run cli-two" in listed.stdout
    assert explained.returncode == 0, explained.stderr
    assert "state report: miss: no entry for this key" in explained.stdout
    assert "differs in:\n  the command (run): changed" in explained.stdout
    assert "new entry: " in explained.stdout and "(written when this attempt succeeded)" in explained.stdout
    assert unknown.returncode == 2 and "run cli-two has no state 'nope'" in unknown.stderr
    assert "its cached states: evaluate, prep, publish, report, tokenize, train" in unknown.stderr
    assert refused.returncode == 2 and "needs --scope SCOPE, --older-than DURATION" in refused.stderr
    assert "Traceback" not in unknown.stderr + refused.stderr
    assert purged.stdout.startswith("purged 8 entries under ")
    assert emptied.stdout.startswith("no entries under ") and "(scope cache-chain)" in emptied.stdout


def entries_dir(harness: Harness, scope: str) -> Path:
    (directory,) = [p for p in harness.home.rglob(scope) if p.parent.name == ".npaflow-cache"]
    return directory


async def test_list_and_purge_work_past_damaged_entries_and_show_them(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="dmg-one"))
        scope = entries_dir(local_harness, "cache-chain")
        (scope / ("ab" * 32 + ".json")).write_bytes(b"\xff\xfe not text")
        (scope / ("cd" * 32 + ".json")).write_text('{"key": "sha256:')
        os.mkfifo(scope / ("ef" * 32 + ".json"))
        listed = await npaflow(env, local_harness, "cache", "list", "--scope", "cache-chain")
        purged = await npaflow(env, local_harness, "cache", "purge", "--scope", "cache-chain")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("8 entries under ")  # six readable, two damaged (a FIFO is no file)
    assert f"sha256:{'ab' * 6}" in listed.stdout and "damaged (damaged entry at" in listed.stdout
    assert "not UTF-8" in listed.stdout
    assert purged.returncode == 0, purged.stderr
    assert purged.stdout.startswith("purged 8 entries under ")
    assert [p.name for p in scope.iterdir() if p.suffix == ".json"] == ["ef" * 32 + ".json"]


async def test_purge_by_key_run_and_state_deletes_exactly_what_its_dry_run_lists(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    edited = {"report": f"echo new > {tmp_path}/{{{{run.id}}}}/report/out.txt"}
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="pk-one"))
        await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, commands=edited), run_id="pk-two")
        )
        cli = lambda *words: npaflow(env, local_harness, "cache", *words)  # noqa: E731
        rows = json.loads((await cli("list", "--scope", "cache-chain", "--json")).stdout)["rows"]
        keys = {row["state"]: row["key"] for row in rows if row["source_run"] == "pk-one"}
        prep_key, full_key = keys["prep"], keys["tokenize"].removeprefix("sha256:")
        dry = await cli("purge", "--run", "pk-two", "--dry-run")
        by_run_state = await cli("purge", "--run", "pk-two", "--state", "report")
        by_run = await cli("purge", "--run", "pk-two")
        short = await cli("purge", "--key", prep_key.removeprefix("sha256:")[:12], "--dry-run")
        by_key = await cli("purge", "--key", f"sha256:{full_key}")
        nothing = await cli("purge", "--run", "pk-nobody")
        too_short = await cli("purge", "--key", "abc")
        state_alone = await cli("purge", "--state", "report")
        left = (await cli("list", "--scope", "cache-chain")).stdout
    assert dry.returncode == 0 and dry.stdout.startswith("would purge 2 entries under ")
    assert "/report " in dry.stdout and "/publish " in dry.stdout and "run pk-two" in dry.stdout
    assert by_run_state.stdout.startswith("purged 1 entries under ")
    assert by_run.stdout.startswith("purged 1 entries under ")  # publish: report went just before
    assert (
        short.returncode == 0
        and short.stdout.startswith("would purge 1 entries")
        and "/prep " in short.stdout
    )
    assert by_key.stdout.startswith("purged 1 entries under ")
    assert (
        nothing.returncode == 2 and "no entry under" in nothing.stderr and "--run pk-nobody" in nothing.stderr
    )
    assert too_short.returncode == 2 and "at least 12 hex digits" in too_short.stderr
    assert state_alone.returncode == 2 and "--state needs --run" in state_alone.stderr
    assert left.startswith("5 entries under ") and full_key[:12] not in left
    for result in (nothing, too_short, state_alone):
        assert "Traceback" not in result.stderr


async def test_explain_names_an_edited_input_by_its_uri_and_its_content_digest(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        await local_harness.finish(await local_harness.start(chain_spec(tmp_path), run_id="in-one"))
        await local_harness.finish(
            await local_harness.start(chain_spec(tmp_path, seed="s2"), run_id="in-two")
        )
        explained = await npaflow(env, local_harness, "cache", "explain", "in-two", "--state", "prep")
    assert explained.returncode == 0, explained.stderr
    assert f"  input {tmp_path}/seed.txt: content sha256 " in explained.stdout
    assert "inputs[0]" not in explained.stdout and "etag" not in explained.stdout
