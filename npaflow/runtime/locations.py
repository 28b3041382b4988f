"""Where a run's ledger lives: the spec's `config.bucket`, else the shared root, else the home.

Workers and the CLI compute it the same way, so `submit` can name a run's
ledger before any worker has picked the run up. Every path component that
comes from input (`config.prefix`, the run id, `config.bucket`) is checked
here, so no input can place a ledger outside its root.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from npaflow.catalog import ToolCatalog
from npaflow.context import build_run_context
from npaflow.document.models import WorkflowSpec
from npaflow.errors import ConfigurationError
from npaflow.ids import RunId
from npaflow.ledger_paths import CACHE_DIR, bucket_problem, prefix_problem


def ledger_base(ledger_root: str, home: Path) -> str:
    """The ledger root for runs without `config.bucket`: the shared root, else `<home>/runs`.

    `home` must be absolute (callers resolve NPAFLOW_HOME).
    """
    if ledger_root:
        return ledger_root.rstrip("/")
    return f"file://{home}/runs"


def run_prefix_for(spec: WorkflowSpec, catalog: ToolCatalog, run_id: RunId, base: str) -> str:
    """`s3://<config.bucket>/<prefix>` when the spec names a bucket, else `<base>/<prefix>`.

    "" when neither is known (a client that does not know the workers' ledger root).

    Raises:
        ConfigurationError: the prefix or bucket would leave the ledger root.
    """
    context = build_run_context(spec, catalog, run_id)
    prefix = str(context.config.get("prefix") or run_id).strip()
    bucket = str(context.config.get("bucket") or "").strip()
    problem = prefix_problem(prefix)
    if problem:
        raise ConfigurationError(
            f"config.prefix {prefix[:120]!r} {problem}; set config.prefix to a relative path"
        )
    if bucket:
        problem = bucket_problem(bucket)
        if problem:
            raise ConfigurationError(
                f"config.bucket {bucket[:120]!r} {problem}; set config.bucket to a bucket name"
            )
        root = f"s3://{bucket.removeprefix('s3://').strip('/')}"
    elif base:
        root = base.rstrip("/")
    else:
        return ""
    uri = f"{root}/{prefix.strip('/')}"
    if not posixpath.normpath(_path_of(uri)).startswith(posixpath.normpath(_path_of(root)) + "/"):
        raise ConfigurationError(f"the ledger path {uri[:200]!r} is not under its root {root!r}")
    return uri


def cache_root_for(spec: WorkflowSpec, catalog: ToolCatalog, run_id: RunId, base: str) -> str:
    """Where the stage cache's entries live: beside the runs' ledgers, under CACHE_DIR."""
    bucket = str(build_run_context(spec, catalog, run_id).config.get("bucket") or "").strip()
    root = f"s3://{bucket.removeprefix('s3://').strip('/')}" if bucket else base.rstrip("/")
    return f"{root}/{CACHE_DIR}" if root else ""


def _path_of(uri: str) -> str:
    scheme, sep, rest = uri.partition("://")
    return rest if sep else scheme


def shared_prefix(spec: WorkflowSpec, catalog: ToolCatalog) -> str:
    """The ledger prefix when every run of `spec` gets the same one ("" when each run has its own).

    A prefix holds one run's ledger (activities/load_refusals.py), so a schedule of
    such a spec would fail every run after the first.
    """
    first, second = (
        str(build_run_context(spec, catalog, RunId(run_id)).config.get("prefix") or run_id).strip()
        for run_id in ("npaflow-probe-1", "npaflow-probe-2")
    )
    return first if first == second else ""
