"""Environment variables npaflow reads, with their defaults (part of npaflow/runtime/contract.py).

Kept apart from the contract's activity models so the spec commands import it cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

#: The default main task queue (contract.DEFAULT_TASK_QUEUE).
DEFAULT_TASK_QUEUE = "npaflow"


class EnvVar(StrEnum):
    """Environment variables npaflow reads (worker/config.py and the CLI), with their meaning."""

    TEMPORAL_ADDRESS = "TEMPORAL_ADDRESS"  # Temporal frontend host:port
    TEMPORAL_NAMESPACE = "TEMPORAL_NAMESPACE"  # Temporal namespace
    # Read by temporalio.envconfig, with TEMPORAL_API_KEY and TEMPORAL_TLS* (Temporal's convention):
    TEMPORAL_PROFILE = "TEMPORAL_PROFILE"  # profile of the client config file
    TEMPORAL_CONFIG_FILE = "TEMPORAL_CONFIG_FILE"  # client config TOML file
    TASK_QUEUE = "NPAFLOW_TASK_QUEUE"  # main task queue
    BACKEND = "NPAFLOW_BACKEND"  # backends a worker offers, comma-separated
    HOME = "NPAFLOW_HOME"  # local jobs, single-machine ledgers, dev-server data
    LEDGER_ROOT = "NPAFLOW_LEDGER_ROOT"  # shared ledger root (file:// or s3://bucket/prefix)
    WORKER_ID = "NPAFLOW_WORKER_ID"  # this worker's id (default: persisted in NPAFLOW_HOME)
    JOB_ENV = "NPAFLOW_JOB_ENV"  # worker variables passed through to local jobs by name
    CATALOG = "NPAFLOW_CATALOG"  # extra tool catalogs, os.pathsep separated
    LOG_FORMAT = "NPAFLOW_LOG_FORMAT"  # json or console
    SKYPILOT_ENDPOINT = "SKYPILOT_API_SERVER_ENDPOINT"  # SkyPilot API server (required for skypilot)
    SKYPILOT_POLL_SECONDS = "NPAFLOW_SKYPILOT_POLL_SECONDS"  # seconds between a worker's queue calls
    AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"  # S3 endpoint (MinIO, SeaweedFS); AWS when unset
    DEPLOYMENT = "NPAFLOW_DEPLOYMENT"  # Temporal Worker Deployment name ("" or "none": unversioned)
    BUILD_ID = "NPAFLOW_BUILD_ID"  # this worker's version (default: package version + code hash)
    METRICS_ADDRESS = "NPAFLOW_METRICS_ADDRESS"  # HOST:PORT of the worker's /metrics (off when unset)
    NOTIFY_URL = "NPAFLOW_NOTIFY_URL"  # webhook URLs for run notifications, whitespace/comma separated
    UI_URL = "NPAFLOW_UI_URL"  # the Temporal UI's base URL, for links in notifications
    RECONCILE_SECONDS = "NPAFLOW_RECONCILE_SECONDS"  # seconds between orphan sweeps (0: none)
    PAGE_URL = "NPAFLOW_PAGE_URL"  # `npaflow ui`'s base URL, linked from each run's Temporal UI details
    QUOTA_POOL = "NPAFLOW_QUOTA_POOL"  # the GPU quota pool of runs on this task queue without --quota-pool


#: Defaults for the variables that have one.
ENV_DEFAULTS: dict[EnvVar, str] = {
    EnvVar.TEMPORAL_ADDRESS: "127.0.0.1:7233",
    EnvVar.TEMPORAL_NAMESPACE: "default",
    EnvVar.TASK_QUEUE: DEFAULT_TASK_QUEUE,
    EnvVar.BACKEND: "local",
    EnvVar.HOME: "~/.npaflow",
    EnvVar.LOG_FORMAT: "json",
    EnvVar.SKYPILOT_POLL_SECONDS: "5",
    EnvVar.DEPLOYMENT: "npaflow",
    EnvVar.RECONCILE_SECONDS: "20",
}

#: NPAFLOW_* variables read outside the worker's configuration: image preflight
#: (npaflow/cli/images), the run page's token (`npaflow ui`), a local job's marker.
OTHER_NPAFLOW_VARIABLES = frozenset(
    {
        "NPAFLOW_REGISTRY_HOST",
        "NPAFLOW_REGISTRY_USERNAME",
        "NPAFLOW_REGISTRY_PASSWORD",
        "NPAFLOW_INSECURE_REGISTRIES",
        "NPAFLOW_IMAGE_CACHE_SECONDS",
        "NPAFLOW_UI_TOKEN",
        "NPAFLOW_LOCAL_JOB",
    }
)
#: Every NPAFLOW_* variable npaflow reads.
KNOWN_NPAFLOW_VARIABLES = frozenset(
    {v.value for v in EnvVar if v.value.startswith("NPAFLOW_")} | OTHER_NPAFLOW_VARIABLES
)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """NPAFLOW_* names set that npaflow never reads: most often a typo whose setting is lost."""
    return sorted(n for n in environ if n.startswith("NPAFLOW_") and n not in KNOWN_NPAFLOW_VARIABLES)
