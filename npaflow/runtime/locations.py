"""Where a run's ledger lives: the spec's `config.bucket`, else the shared root, else the home.

Workers and the CLI compute it the same way, so `submit` can name a run's
ledger before any worker has picked the run up.
"""

from __future__ import annotations

from pathlib import Path

from npaflow.catalog import ToolCatalog
from npaflow.context import build_run_context
from npaflow.document.models import WorkflowSpec


def ledger_base(ledger_root: str, home: Path) -> str:
    """The ledger root for runs without `config.bucket`: the shared root, else `<home>/runs`.

    `home` must be absolute (callers resolve NPAFLOW_HOME).
    """
    if ledger_root:
        return ledger_root.rstrip("/")
    return f"file://{home}/runs"


def run_prefix_for(spec: WorkflowSpec, catalog: ToolCatalog, run_id: str, base: str) -> str:
    """`s3://<config.bucket>/<prefix>` when the spec names a bucket, else `<base>/<prefix>`.

    "" when neither is known (a client that does not know the workers' ledger root).
    """
    context = build_run_context(spec, catalog, run_id)
    prefix = str(context.config.get("prefix") or run_id).strip("/")
    bucket = str(context.config.get("bucket") or "").strip()
    if bucket:
        return f"s3://{bucket.removeprefix('s3://').strip('/')}/{prefix}"
    return f"{base.rstrip('/')}/{prefix}" if base else ""
