"""`npaflow cache list | explain | purge` end to end, through a worker."""

from __future__ import annotations

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
    assert "differs in: step.task.run" in explained.stdout
    assert unknown.returncode == 2 and "was never looked up in the stage cache" in unknown.stderr
    assert refused.returncode == 2 and "needs --scope SCOPE or --older-than DURATION" in refused.stderr
    assert "Traceback" not in unknown.stderr + refused.stderr
    assert purged.stdout.startswith("purged 8 entries under ")
    assert emptied.stdout.startswith("no entries under ") and "(scope cache-chain)" in emptied.stdout
