"""What every activity needs from the worker: config, storage and backends."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from activities.backends.base import Backend
from activities.storage import StorageRouter
from npaflow.errors import ConfigurationError
from npaflow.runtime.request import BackendName


@dataclass
class ActivityContext:
    """Shared dependencies, built once by the worker (tests build their own)."""

    home: Path
    backends: dict[BackendName, Backend]
    storage: StorageRouter = field(default_factory=StorageRouter)
    aws_endpoint_url: str = ""
    catalog_paths: list[str] = field(default_factory=list)

    def backend(self, name: BackendName) -> Backend:
        """Return the backend a run asked for.

        Raises:
            ConfigurationError: this worker has no such backend.
        """
        backend = self.backends.get(name)
        if backend is None:
            raise ConfigurationError(f"backend '{name.value}' is not configured on this worker "
                                     f"(available: {', '.join(b.value for b in self.backends)})")
        return backend
