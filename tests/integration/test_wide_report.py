"""A wide run's report is drawn from its recorded spec however large (issue 63; seen at 5,000 members)."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.run_report import render_report
from activities.storage import StorageRouter
from npaflow.runtime.contract import spec_file_uri
from npaflow.runtime.ledger import RuntimeLedger
from tests.spec_factory import wide_group

pytestmark = pytest.mark.integration


async def test_the_report_of_a_run_whose_spec_is_past_a_mebibyte_is_drawn(tmp_path: Path) -> None:
    text = wide_group(tmp_path, 5000, outputs=False)
    assert len(text.encode()) > 1024 * 1024  # past the default read bound of an artifact
    prefix = f"file://{tmp_path}/runs/wide"
    spec = Path(spec_file_uri(prefix).removeprefix("file://"))
    spec.parent.mkdir(parents=True)
    spec.write_text(text)
    ledger = RuntimeLedger(workflow="wide", run_id="wide", api_version="v")
    page = await render_report(StorageRouter(), prefix, ledger)
    assert page.startswith("<!DOCTYPE html>") or "<html" in page[:200]
    assert "shard-04999" in page
