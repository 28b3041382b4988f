"""Which SkyPilot this worker speaks and which one its API server runs, said once at start.

A team's API server is usually newer than its workers (or the other way round
during an upgrade). SkyPilot accepts a client whose API version is within the
server's compatible range and answers `version_mismatch` otherwise; a refusal
is a deployment error no retry fixes, so the worker names both versions and
the fix instead of failing every launch later. SkyPilot's own client warnings
(the "server is newer than your client" reminder among them) go to npaflow's
structured log, never to raw stdout.
"""

from __future__ import annotations

import logging
import re
from enum import StrEnum

import structlog
from pydantic import BaseModel

from npaflow.presets import FROZEN

log = structlog.get_logger("skypilot")

#: The range of SkyPilot releases npaflow is tested against (client and API server alike).
SUPPORTED_RANGE = ">=0.12.2,<0.15"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ServerState(StrEnum):
    """What the API server's health check says about this client (SkyPilot's ApiServerStatus)."""

    HEALTHY = "healthy"
    UNHEALTHY = "unhealthy"
    VERSION_MISMATCH = "version_mismatch"
    NEEDS_AUTH = "needs_auth"


class SkyPilotVersions(BaseModel):
    """The client's and the server's release and API version, as the health check reports them."""

    model_config = FROZEN

    endpoint: str
    client_version: str
    client_api_version: int
    server_state: ServerState
    server_version: str | None = None
    server_api_version: int | None = None
    error: str | None = None

    @property
    def refused(self) -> bool:
        """True when the server refuses this client: a deployment error, not an outage."""
        return self.server_state is ServerState.VERSION_MISMATCH

    @property
    def reachable(self) -> bool:
        """False only when nothing answered the health check (an outage, not a refusal)."""
        return self.server_state is not ServerState.UNHEALTHY

    def refusal(self) -> str:
        """One message naming both versions and the two ways out."""
        server = f"{self.server_version or 'unknown'} (API {self.server_api_version or '?'})"
        detail = f": {self.error}" if self.error else ""
        wanted = self.server_version or "<server version>"
        return (
            f"the SkyPilot API server at {self.endpoint} runs {server} and refuses this worker's "
            f"client {self.client_version} (API {self.client_api_version}){detail} (hint: install "
            f"a client the server accepts, pip install 'skypilot=={wanted}', "
            f"or upgrade the server; npaflow supports skypilot{SUPPORTED_RANGE}, docs/deploy.md)"
        )


def read_versions(endpoint: str) -> SkyPilotVersions:
    """Ask the server's health endpoint afresh (blocking; never starts a server)."""
    import sky
    from sky.server import common as server_common
    from sky.server import constants

    server_common.get_api_server_status_response.cache_clear()
    info = server_common.get_api_server_status(endpoint)
    return SkyPilotVersions(
        endpoint=endpoint,
        client_version=sky.__version__,
        client_api_version=constants.API_VERSION,
        server_state=ServerState(info.status.value),
        server_version=info.version,
        server_api_version=info.api_version,
        error=info.error,
    )


class _ToStructlog(logging.Handler):
    """Forwards SkyPilot's client log records to npaflow's structured log, colours stripped."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = _ANSI.sub("", record.getMessage()).strip()
        except (TypeError, ValueError):
            message = str(record.msg)
        log.log(record.levelno, "skypilot.client_log", message=message, logger=record.name)


def route_skypilot_logging() -> None:
    """Replace SkyPilot's stdout handler (sky_logging) with one into npaflow's log; idempotent."""
    sky_logger = logging.getLogger("sky")
    for handler in list(sky_logger.handlers):
        if not isinstance(handler, _ToStructlog):
            sky_logger.removeHandler(handler)
    if not any(isinstance(handler, _ToStructlog) for handler in sky_logger.handlers):
        forwarder = _ToStructlog(level=logging.INFO)
        sky_logger.addHandler(forwarder)
    sky_logger.propagate = False
