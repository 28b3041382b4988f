"""The worker says which SkyPilot it speaks and which one its API server runs, at start and in --health-check.

An unreachable server at start is an outage the backend waits out (launches retry
within the transport budget); a server that refuses this client is a deployment
error no retry fixes, so the worker refuses to start and the health check fails,
both naming the two versions and the fix.
"""

from __future__ import annotations

import asyncio

import structlog

from activities.backends.base import Backend
from npaflow.errors import UsageError
from npaflow.runtime.request import BackendName

log = structlog.get_logger(__name__)


async def announce_skypilot(backends: dict[BackendName, Backend]) -> None:
    """Log the SDK's and the server's versions; refuse to start when the server refuses the SDK.

    Raises:
        UsageError: the API server answers that it does not accept this client.
    """
    if BackendName.SKYPILOT not in backends:
        return
    from activities.backends.skypilot import SkyPilotBackend

    backend = backends[BackendName.SKYPILOT]
    assert isinstance(backend, SkyPilotBackend)
    try:
        versions = await backend.api.versions()
    except Exception as exc:  # noqa: BLE001 (an unreadable health answer is an outage, never "compatible")
        log.warning("worker.skypilot_versions_unknown", error=f"{type(exc).__name__}: {exc}")
        return
    log.info("worker.skypilot", **versions.model_dump(mode="json"))
    if versions.refused:
        raise UsageError(versions.refusal())
    if not versions.reachable:
        log.warning(
            "worker.skypilot_unreachable",
            endpoint=versions.endpoint,
            hint="launches and polls wait for it within the transport budget",
        )


def skypilot_health(endpoint: str) -> str | None:
    """None when the API server answers and accepts this client, else why not (the health check)."""
    from activities.backends.skypilot_sdk import SkyPilotSdk

    versions = asyncio.run(SkyPilotSdk(endpoint).versions())
    if versions.refused:
        return versions.refusal()
    if not versions.reachable:
        return f"the SkyPilot API server at {endpoint} does not answer its health check"
    return None
