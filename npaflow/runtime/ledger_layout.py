"""Where a run's ledger files lie under its prefix (reference §6.6); part of the contract."""

from __future__ import annotations

#: `<run prefix>/npa-workflow/` holds the run's ledger files (reference §6.6).
LEDGER_DIR = "npa-workflow"
RUNTIME_FILE = "runtime.json"
MANIFEST_FILE = "manifest.json"
STATUS_FILE = "status.json"
#: The run as a page (graph, timeline, decisions), written when it ends (npaflow/picture/report.py).
REPORT_FILE = "report.html"
#: Launch receipts (request id, token) written before a launch is awaited.
LAUNCHES_DIR = "launches"
#: Each fan-out occurrence's list as read and its `members.json`: `<ledger>/fanout/<group>-<n>/`.
FANOUT_DIR = "fanout"
#: A loaded spec too big for one payload, packed, under its digest (npaflow/runtime/spec_parts.py).
SPEC_PARTS_DIR = "spec-parts"
#: The submitted spec with `--var` values merged: `<run prefix>/workflow.yaml`.
SPEC_FILE = "workflow.yaml"


def ledger_file_uri(run_prefix_uri: str, name: str) -> str:
    """The URI of one ledger file under a run prefix."""
    return f"{run_prefix_uri}/{LEDGER_DIR}/{name}"


def spec_file_uri(run_prefix_uri: str) -> str:
    """Where the submitted spec is kept next to the ledger."""
    return f"{run_prefix_uri}/{SPEC_FILE}"
