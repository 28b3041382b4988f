"""`report.html` beside `runtime.json`: the run's picture for whoever has only the bucket.

Written by the export that records the run's end (and on demand by `npaflow
status --write-report` and `npaflow report`), from the stored spec (`workflow.yaml`)
and the ledger. A spec that can no longer be read only means no report: the
ledger export never fails for its picture.
"""

from __future__ import annotations

import time

import structlog
from temporalio import activity

from activities.errors import mapped_errors
from activities.ledger import read_ledger
from activities.storage import ArtifactMissingError, StorageRouter
from activities.storage.base import MAX_SPEC_READ_BYTES
from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import ConfigurationError, SpecError
from npaflow.picture.report import ReportLinks, report_html
from npaflow.runtime.contract import RENDER_REPORT, REPORT_FILE, ledger_file_uri, spec_file_uri
from npaflow.runtime.ledger import RuntimeLedger
from npaflow.runtime.reads import RenderReportInput, RunReport
from npaflow.spec.load import parse_spec

log = structlog.get_logger(__name__)


def report_links(ui_url: str, run_id: str) -> ReportLinks:
    """A link to the run in the Temporal UI when the workers know its address (NPAFLOW_UI_URL)."""
    if not ui_url:
        return ReportLinks()
    namespace = activity.info().workflow_namespace if activity.in_activity() else "default"
    return ReportLinks(temporal_ui=f"{ui_url.rstrip('/')}/namespaces/{namespace}/workflows/{run_id}")


async def render_report(
    storage: StorageRouter, ledger_uri: str, ledger: RuntimeLedger, spec_text: str = "", ui_url: str = ""
) -> str:
    """The page, or "" when the run's spec cannot be read back (logged)."""
    if not spec_text:
        uri = spec_file_uri(ledger_uri)
        try:
            spec_text = await storage.for_ledger(uri).read_text(uri, max_bytes=MAX_SPEC_READ_BYTES)
        except ArtifactMissingError:
            log.warning("report.no_spec", run_id=ledger.run_id, uri=uri)
            return ""
    try:
        spec, _ = parse_spec(parse_yaml(spec_text, spec_file_uri(ledger_uri)))
    except SpecError as error:
        log.warning("report.bad_spec", run_id=ledger.run_id, error=str(error)[:300])
        return ""
    return report_html(spec, ledger, now=time.time(), links=report_links(ui_url, ledger.run_id))


async def store_report(storage: StorageRouter, ledger_uri: str, page: str) -> str:
    """Write `report.html` beside the ledger; its URI."""
    uri = ledger_file_uri(ledger_uri, REPORT_FILE)
    await storage.for_ledger(uri).write_text(uri, page, "text/html; charset=utf-8")
    return uri


class ReportActivities:
    """`render_report`: the report of a run, rendered where the storage credentials are."""

    def __init__(self, storage: StorageRouter, ui_url: str = "") -> None:
        self.storage = storage
        self.ui_url = ui_url

    async def write_at_end(self, ledger_uri: str, ledger: RuntimeLedger, spec_text: str) -> None:
        """The ledger export's hook: write report.html; a report that fails never fails the export."""
        try:
            page = await render_report(self.storage, ledger_uri, ledger, spec_text, self.ui_url)
            if page:
                uri = await store_report(self.storage, ledger_uri, page)
                log.info("report.written", run_id=ledger.run_id, uri=uri, bytes=len(page))
        except Exception:
            log.exception("report.failed", run_id=ledger.run_id, ledger_uri=ledger_uri)

    @activity.defn(name=RENDER_REPORT.name)
    @mapped_errors
    async def render_report(self, request: RenderReportInput) -> RunReport:
        """The page; written beside the ledger too when asked."""
        ledger = await read_ledger(self.storage, request.ledger_uri)
        if ledger is None:
            raise ConfigurationError(
                f"no ledger at {request.ledger_uri} yet: the run has not recorded anything"
            )
        page = await render_report(self.storage, request.ledger_uri, ledger, ui_url=self.ui_url)
        if not page:
            raise ConfigurationError(
                f"the run's spec ({spec_file_uri(request.ledger_uri)}) cannot be read back"
            )
        written = await store_report(self.storage, request.ledger_uri, page) if request.write else ""
        return RunReport(run_id=ledger.run_id, html=page, written_uri=written)
