"""What every activity needs from the worker: identity, backends, pollers, storage, ledger root."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import SecretStr

from activities.backends.base import Backend
from activities.ledger import LedgerCache
from activities.poller import JobPoller
from activities.storage import StorageRouter
from npaflow.errors import ConfigurationError
from npaflow.runtime.contract import DEFAULT_TASK_QUEUE, worker_task_queue
from npaflow.runtime.locations import ledger_base
from npaflow.runtime.request import BackendName


@dataclass
class ActivityContext:
    """Shared dependencies, built once by the worker (tests build their own)."""

    home: Path
    backends: dict[BackendName, Backend]
    worker_id: str = "local"
    task_queue: str = DEFAULT_TASK_QUEUE
    storage: StorageRouter = field(default_factory=StorageRouter)
    aws_endpoint_url: str = ""
    catalog_paths: list[str] = field(default_factory=list)
    ledger_root: str = ""  # NPAFLOW_LEDGER_ROOT: where runs without config.bucket keep ledgers
    ledger_cache: LedgerCache = field(default_factory=LedgerCache)  # each run's ledger as last written
    notify_webhooks: tuple[SecretStr, ...] = ()  # NPAFLOW_NOTIFY_URL (never logged or returned)
    ui_url: str = ""  # NPAFLOW_UI_URL: links in notifications
    quota_pool: str = ""  # NPAFLOW_QUOTA_POOL: the pool of runs started without --quota-pool
    page_url: str = ""  # NPAFLOW_PAGE_URL: `npaflow ui`, linked from each run's Temporal UI details
    _pollers: dict[BackendName, JobPoller] = field(default_factory=dict)

    @property
    def worker_queue(self) -> str:
        """This worker's own task queue (activities of the local jobs it holds)."""
        return worker_task_queue(self.task_queue, self.worker_id)

    def backend(self, name: BackendName) -> Backend:
        """Return the backend a run asked for.

        Raises:
            ConfigurationError: this worker has no such backend.
        """
        backend = self.backends.get(name)
        if backend is None:
            raise ConfigurationError(
                f"backend '{name.value}' is not configured on this worker "
                f"(available: {', '.join(b.value for b in self.backends)})"
            )
        return backend

    def poller(self, name: BackendName) -> JobPoller:
        """The process-wide poller of one backend (one queue call per tick for all awaits)."""
        if name not in self._pollers:
            self._pollers[name] = JobPoller(self.backend(name))
        return self._pollers[name]

    def ledger_base(self) -> str:
        """Where runs keep their ledgers without `config.bucket`: the shared root, else this home."""
        return ledger_base(self.ledger_root, self.home.resolve())
