"""report.html: written when a run ends, drawn on demand by `npaflow report`, opened offline in Chromium.

Screenshots go to $NPAFLOW_TEST_ARTIFACTS (default: the test's tmp dir), never into the tree.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from npaflow.catalog.load import load_catalogs
from npaflow.spec.load import load_spec_from_path
from tests.browser import chromium, page_requests
from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness
from tests.helpers import EXAMPLES

pytestmark = pytest.mark.e2e

FAILING = """
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: failing}
initial: first
states:
  first: {run: {shell: "echo fine"}, next: second}
  second: {run: {shell: "echo 'second - not fixed yet' >&2; exit 3"}, next: third}
  third: {run: {shell: "true"}, terminal: true}
"""


def artifacts_dir(tmp_path: Path) -> Path:
    where = Path(os.environ.get("NPAFLOW_TEST_ARTIFACTS", tmp_path))
    where.mkdir(parents=True, exist_ok=True)
    return where


def drawn_phases(page: str) -> dict[str, str]:
    return dict(re.findall(r'data-state="([^"]+)" data-phase="([^"]+)"', page))


async def test_every_example_run_leaves_a_report_beside_its_ledger_that_opens_with_no_network(
    local_harness: Harness, tmp_path: Path
) -> None:
    reports: dict[str, Path] = {}
    async with local_harness.worker():
        for spec in sorted(EXAMPLES.glob("*.yaml")):
            outcome = await local_harness.finish(
                await local_harness.start(
                    spec.read_text(), run_id=f"rep-{spec.stem}", vars={"root": str(tmp_path)}
                )
            )
            assert outcome.status == "succeeded", outcome.error
            reports[spec.stem] = (
                local_harness.home / "runs" / f"rep-{spec.stem}" / "npa-workflow" / "report.html"
            )
    for stem, report in reports.items():
        page = report.read_text()
        states = set(load_spec_from_path(EXAMPLES / f"{stem}.yaml", catalog=load_catalogs()).states)
        phases = drawn_phases(page)
        assert set(phases) == states and "pending" not in phases.values(), (stem, phases)
        assert 'class="npa-timeline"' in page and 'id="run-status">succeeded<' in page
    shots = artifacts_dir(tmp_path)
    for stem, report in reports.items():
        net_log = tmp_path / f"{stem}-net.json"
        dom = await chromium(f"--log-net-log={net_log}", "--dump-dom", report.as_uri())
        assert 'class="npa-graph"' in dom and 'class="npa-timeline"' in dom, stem
        assert page_requests(net_log) == set(), stem
    for stem in ("gate-loop", "parallel-sweep"):
        shot = shots / f"report-{stem}.png"
        await chromium(f"--screenshot={shot}", "--window-size=1300,1000", reports[stem].as_uri())
        assert shot.stat().st_size > 10_000


async def test_npaflow_report_draws_a_failed_run_with_its_error_and_status_can_write_it_beside_the_ledger(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    out = tmp_path / "failing.html"
    async with local_harness.worker():
        outcome = await local_harness.finish(await local_harness.start(FAILING, run_id="rep-failing"))
        assert outcome.status == "failed"
        ledger_dir = local_harness.home / "runs" / "rep-failing" / "npa-workflow"
        (ledger_dir / "report.html").unlink()  # written when it failed; drawn again below
        written = await npaflow(env, local_harness, "report", "rep-failing", "--out", str(out))
        status = await npaflow(env, local_harness, "status", "rep-failing", "--write-report")
    assert written.returncode == 0, written.stderr
    assert f"wrote {out}" in written.stdout
    phases = drawn_phases(out.read_text())
    assert (phases["first"], phases["second"], phases["third"]) == ("succeeded", "failed", "skipped")
    assert "npaflow logs rep-failing --state second" in out.read_text()
    assert status.returncode == 0, status.stderr
    assert "report: " in status.stdout and (ledger_dir / "report.html").read_text() == out.read_text()


async def test_a_report_of_a_run_that_does_not_exist_is_one_line_and_exit_2(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    result = await npaflow(env, local_harness, "report", "no-such-run")
    assert result.returncode == 2 and "no run with id 'no-such-run'" in result.stderr
    assert "list runs with 'npaflow list'" in result.stderr
    assert "Traceback" not in result.stderr
