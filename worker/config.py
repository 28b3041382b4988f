"""The worker's configuration: the one place its environment variables are read (STYLE rule 20).

Names and defaults come from npaflow/runtime/contract.py (`EnvVar`, `ENV_DEFAULTS`).
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import Mapping
from pathlib import Path

import structlog
from pydantic import BaseModel, Field, SecretStr, ValidationError

from npaflow.document.problems import validation_problems
from npaflow.errors import UsageError
from npaflow.ledger_paths import root_problem
from npaflow.presets import FROZEN
from npaflow.quota import name_problem
from npaflow.runtime.contract import ENV_DEFAULTS, EnvVar
from npaflow.runtime.environment import KNOWN_NPAFLOW_VARIABLES, unknown_variables
from npaflow.runtime.request import BackendName
from npaflow.spec.issues import did_you_mean
from npaflow.temporal.client import task_queue_problem

log = structlog.get_logger(__name__)

WORKER_ID_FILE = "worker-id"
_UNSAFE_ID = re.compile(r"[^a-z0-9-]")
_WORKER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}\Z")
#: NPAFLOW_LOG_FORMAT's values.
LOG_FORMATS = ("json", "console")


def env(name: EnvVar) -> str:
    """A variable's value, else its contract default, else ""."""
    return os.environ.get(name.value) or ENV_DEFAULTS.get(name, "")


def parse_webhooks(text: str) -> tuple[SecretStr, ...]:
    """NPAFLOW_NOTIFY_URL: one or more http(s) URLs, separated by commas or whitespace."""
    return tuple(SecretStr(url) for url in text.replace(",", " ").split())


def default_home() -> Path:
    """`$NPAFLOW_HOME`, else `~/.npaflow`."""
    return Path(env(EnvVar.HOME)).expanduser()


def persistent_worker_id(home: Path, *, create: bool = True) -> str:
    """This home's worker id: `<host>-<6 hex>`, created once and kept in `<home>/worker-id`.

    A restarted worker with the same home keeps its id, so it picks its local
    jobs' activities up again from its own task queue. Without `create`, "" when
    no worker has written one yet.
    """
    path = home / WORKER_ID_FILE
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    if not create:
        return ""
    host = _UNSAFE_ID.sub("-", socket.gethostname().lower().split(".")[0])[:20].strip("-") or "host"
    worker_id = f"{host}-{secrets.token_hex(3)}"
    home.mkdir(parents=True, exist_ok=True)
    try:  # create-if-absent: two processes starting on one home agree on the first id written
        with open(path, "x", encoding="utf-8") as file:
            file.write(worker_id + "\n")
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    return worker_id


class WorkerConfig(BaseModel):
    """Where to connect, what to serve, which backends to offer, and who this worker is."""

    model_config = FROZEN

    # Flags over temporalio.envconfig (profile file and TEMPORAL_* variables); "" = from there.
    address: str = ""
    namespace: str = ""
    profile: str = ""
    task_queue: str = ENV_DEFAULTS[EnvVar.TASK_QUEUE]
    home: Path = Field(default_factory=default_home)
    worker_id: str = ""
    backends: tuple[BackendName, ...] = (BackendName.LOCAL,)
    skypilot_endpoint: str = ""
    skypilot_poll_seconds: float = Field(
        default=float(ENV_DEFAULTS[EnvVar.SKYPILOT_POLL_SECONDS]), gt=0, le=300
    )
    aws_endpoint_url: str = ""
    catalog_paths: tuple[str, ...] = ()
    ledger_root: str = ""
    job_env: tuple[str, ...] = ()
    max_concurrent_pollers: int = 1000
    log_format: str = ENV_DEFAULTS[EnvVar.LOG_FORMAT]
    deployment: str = ENV_DEFAULTS[EnvVar.DEPLOYMENT]  # "none": unversioned
    build_id: str = ""  # "": the package version plus a hash of the workflow code
    metrics_address: str = ""  # HOST:PORT for Prometheus; "": no metrics endpoint
    notify_urls: tuple[SecretStr, ...] = ()  # run notification webhooks (secret: never logged)
    ui_url: str = ""  # the Temporal UI's base URL, for links in notifications
    page_url: str = ""  # NPAFLOW_PAGE_URL: `npaflow ui`, linked from each run's Temporal UI details
    quota_pool: str = ""  # NPAFLOW_QUOTA_POOL: the pool of runs started without --quota-pool
    #: Seconds between orphan sweeps (worker/reconciler.py); 0 turns the sweep off.
    reconcile_seconds: float = Field(default=float(ENV_DEFAULTS[EnvVar.RECONCILE_SECONDS]), ge=0, le=600)

    @classmethod
    def from_env(cls, *, create_id: bool = True, **overrides: object) -> WorkerConfig:
        """Build from the environment (contract.EnvVar); non-empty keyword overrides (flags) win.

        Without NPAFLOW_WORKER_ID the id comes from the home, created there unless
        `create_id` is False (a health check must not invent the id of a worker).

        Raises:
            UsageError: a backend name is unknown.
        """
        names = [b.strip() for b in env(EnvVar.BACKEND).split(",") if b.strip()]
        try:
            backends = tuple(BackendName(b) for b in names)
        except ValueError:
            raise UsageError(
                f"{EnvVar.BACKEND.value}={env(EnvVar.BACKEND)!r}: backends are "
                f"{', '.join(b.value for b in BackendName)}"
            ) from None
        values: dict[str, object] = {
            "task_queue": env(EnvVar.TASK_QUEUE),
            "home": default_home(),
            "worker_id": env(EnvVar.WORKER_ID),
            "backends": backends,
            "skypilot_endpoint": env(EnvVar.SKYPILOT_ENDPOINT),
            "skypilot_poll_seconds": env(EnvVar.SKYPILOT_POLL_SECONDS),
            "aws_endpoint_url": env(EnvVar.AWS_ENDPOINT_URL),
            "catalog_paths": tuple(p for p in env(EnvVar.CATALOG).split(os.pathsep) if p),
            "ledger_root": env(EnvVar.LEDGER_ROOT),
            "job_env": tuple(n.strip() for n in env(EnvVar.JOB_ENV).split(",") if n.strip()),
            "log_format": env(EnvVar.LOG_FORMAT),
            "deployment": os.environ.get(EnvVar.DEPLOYMENT.value, ENV_DEFAULTS[EnvVar.DEPLOYMENT]),
            "build_id": env(EnvVar.BUILD_ID),
            "metrics_address": env(EnvVar.METRICS_ADDRESS),
            "notify_urls": parse_webhooks(env(EnvVar.NOTIFY_URL)),
            "ui_url": env(EnvVar.UI_URL),
            "page_url": env(EnvVar.PAGE_URL),
            "quota_pool": env(EnvVar.QUOTA_POOL),
            "reconcile_seconds": env(EnvVar.RECONCILE_SECONDS),
        }
        values.update({k: v for k, v in overrides.items() if v not in (None, "", ())})
        try:
            config = cls.model_validate(values)
        except ValidationError as exc:
            problems = validation_problems(exc, limit=10)
            raise UsageError(f"worker configuration: {problems} (check the NPAFLOW_* variables)") from None
        if config.home.exists() and not config.home.is_dir():
            raise UsageError(f"{EnvVar.HOME.value}={str(config.home)!r} is not a directory")
        if not config.worker_id:
            worker_id = persistent_worker_id(config.home, create=create_id)
            config = config.model_copy(update={"worker_id": worker_id})
        return config

    def check(self) -> None:
        """Refuse a configuration that cannot work, naming what to set.

        Raises:
            UsageError: the skypilot backend is enabled without an API server endpoint.
        """
        if BackendName.SKYPILOT in self.backends and not self.skypilot_endpoint:
            raise UsageError(
                f"the skypilot backend needs {EnvVar.SKYPILOT_ENDPOINT.value} (the URL "
                "of your SkyPilot API server); a worker never starts one itself"
            )
        if problems := self._setting_problems():
            raise UsageError("; ".join(problems))
        for name in self.job_env:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\Z", name):
                raise UsageError(f"{EnvVar.JOB_ENV.value}: {name!r} is not a variable name")
        for index, url in enumerate(self.notify_urls):
            scheme = url.get_secret_value().partition("://")[0]
            if scheme not in ("http", "https"):
                raise UsageError(
                    f"{EnvVar.NOTIFY_URL.value}: webhook {index + 1} is not an http(s) URL "
                    "(separate several with commas or spaces)"
                )

    def _setting_problems(self) -> list[str]:
        """Settings that would start a worker whose every run then fails (or that misnames itself)."""
        problems = []
        if self.ledger_root and root_problem(self.ledger_root):
            problems.append(
                f"{EnvVar.LEDGER_ROOT.value} (--ledger-root) {self.ledger_root!r}: give "
                "s3://BUCKET/PREFIX or an absolute file:///dir"
            )
        if self.worker_id and not _WORKER_ID.match(self.worker_id):
            problems.append(
                f"{EnvVar.WORKER_ID.value}={self.worker_id!r}: 1-63 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit (it names a task queue and every local job)"
            )
        for variable, url in ((EnvVar.PAGE_URL, self.page_url), (EnvVar.UI_URL, self.ui_url)):
            if url and url.partition("://")[0] not in ("http", "https"):
                problems.append(f"{variable.value}={url!r}: give an http(s) URL")
        if self.quota_pool and (problem := name_problem(EnvVar.QUOTA_POOL.value, self.quota_pool)):
            problems.append(problem)
        if queue_problem := task_queue_problem(self.task_queue):
            problems.append(f"{EnvVar.TASK_QUEUE.value} (--task-queue) {self.task_queue!r}: {queue_problem}")
        if self.log_format not in LOG_FORMATS:
            problems.append(f"{EnvVar.LOG_FORMAT.value}={self.log_format!r}: give json or console")
        return problems


def warn_unknown_variables(environ: Mapping[str, str]) -> None:
    """Log each NPAFLOW_* variable npaflow never reads: a typo would otherwise lose its setting silently."""
    for name in unknown_variables(environ):
        hint = did_you_mean(name, KNOWN_NPAFLOW_VARIABLES, "variables")
        log.warning("worker.unknown_variable", variable=name, hint=f"npaflow does not read it; {hint}")
