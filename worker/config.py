"""The worker's configuration: the one place environment variables are read (STYLE rule 20)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from npaflow.runtime.request import BackendName

DEFAULT_ADDRESS = "127.0.0.1:7233"


def default_home() -> Path:
    """`$NPAFLOW_HOME`, else `~/.npaflow`."""
    return Path(os.environ.get("NPAFLOW_HOME") or Path.home() / ".npaflow")


class WorkerConfig(BaseModel):
    """Where to connect, what to serve, and which backends to offer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    address: str = DEFAULT_ADDRESS
    namespace: str = "default"
    task_queue: str = "npaflow"
    home: Path = Field(default_factory=default_home)
    backends: tuple[BackendName, ...] = (BackendName.LOCAL,)
    skypilot_bin: str = "sky"
    aws_endpoint_url: str = ""
    catalog_paths: tuple[str, ...] = ()
    max_concurrent_pollers: int = 1000
    log_format: str = "json"

    @classmethod
    def from_env(cls, **overrides: object) -> WorkerConfig:
        """Build from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, NPAFLOW_* and friends; flags win."""
        env = os.environ
        backends = [b.strip() for b in env.get("NPAFLOW_BACKEND", "local").split(",") if b.strip()]
        values: dict[str, object] = {
            "address": env.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS,
            "namespace": env.get("TEMPORAL_NAMESPACE") or "default",
            "task_queue": env.get("NPAFLOW_TASK_QUEUE") or "npaflow",
            "home": default_home(),
            "backends": tuple(BackendName(b) for b in backends),
            "skypilot_bin": env.get("NPA_SKYPILOT_BIN") or "sky",
            "aws_endpoint_url": env.get("AWS_ENDPOINT_URL") or "",
            "catalog_paths": tuple(p for p in env.get("NPAFLOW_CATALOG", "").split(os.pathsep) if p),
            "log_format": env.get("NPAFLOW_LOG_FORMAT") or "json",
        }
        values.update({k: v for k, v in overrides.items() if v not in (None, "")})
        return cls.model_validate(values)
