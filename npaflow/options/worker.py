"""The worker process's commands: `worker`, `dev`, `replay-check`, `deployment promote|status`."""

from __future__ import annotations

from pydantic import Field

from npaflow.options.connection import ConnectionOptions


class WorkerOptions(ConnectionOptions):
    """`npaflow worker`: the backends offered, what local jobs may see, health check, metrics."""

    backend: str | None = None
    job_env: tuple[str, ...] = ()
    health_check: bool = False
    metrics_address: str | None = None

    def backends(self) -> tuple[str, ...] | None:
        """`--backend a,b` as names (None: the environment's or the default)."""
        names = tuple(b.strip() for b in (self.backend or "").split(",") if b.strip())
        return names or None


class DevOptions(ConnectionOptions):
    """`npaflow dev`: the dev server's gRPC and UI ports on 127.0.0.1, and the worker's metrics."""

    port: int = 7233
    ui_port: int = 8233
    metrics_address: str | None = None


class ReplayCheckOptions(ConnectionOptions):
    """`npaflow replay-check`: which histories to replay (server query, count, a directory)."""

    query: str = ""
    limit: int = 100
    histories: str | None = None


class PromoteOptions(ConnectionOptions):
    """`npaflow deployment promote BUILD_ID`: replay-check, then route new runs (or a ramp of them)."""

    build_id: str
    ramp: float | None = None
    limit: int = 100


class DeploymentStatusOptions(ConnectionOptions):
    """`npaflow deployment status`: versions, their open runs and pollers."""

    json_output: bool = Field(default=False, validation_alias="json")
