"""What the run page says a reconciler did: cancelled jobs by id, or closed a ledger from job records."""

from __future__ import annotations

from typing import Any, cast

import pytest
from temporalio.client import Client

from npaflow.cli import run_endings
from npaflow.cli.ui import reads
from npaflow.cli.ui.reads import RunReads, Snapshot
from npaflow.runtime.ledger import ReconciledJob
from npaflow.runtime.reconcile import ReconcileResult
from npaflow.runtime.reconcile.models import LedgerAfter
from npaflow.runtime.usage import RunUsage

pytestmark = pytest.mark.unit

CLOSED_NOTE = "no job needed cancelling (each had ended); its ledger was closed from the jobs' own records"


async def page_text(monkeypatch: pytest.MonkeyPatch, result: ReconcileResult, note: str) -> str:
    async def answer(client: Any, run_id: str) -> run_endings.Reconciled:
        return run_endings.Reconciled(result, note, settled=True)

    monkeypatch.setattr(reads, "read_reconciled", answer)
    shot = Snapshot(run_id="r1", execution_id="e1", execution_status="TERMINATED", task_queue="q")
    await RunReads(cast(Client, None))._reconciled(shot)
    return shot.reconciled


async def test_a_terminated_run_whose_ledger_was_closed_from_its_jobs_records_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed = ReconcileResult(run_id="r1", ledger=LedgerAfter(usage=RunUsage()))
    assert await page_text(monkeypatch, closed, CLOSED_NOTE) == CLOSED_NOTE


async def test_a_terminated_run_whose_jobs_the_reconciler_cancelled_names_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cancelled = ReconcileResult(run_id="r1", jobs=[ReconciledJob(job_id="7")])
    assert await page_text(monkeypatch, cancelled, "") == "the reconciler cancelled its jobs by exact id: 7"
