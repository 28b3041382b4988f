"""`npaflow ui`: a small read-only web app over Temporal: runs, and each run's live graph and timeline.

Loopback by default. Served elsewhere (`--host`) it needs a token (`--token` or
NPAFLOW_UI_TOKEN): a page that shows jobs and logs is not left open by accident.
"""

from __future__ import annotations

import ipaddress
import os
import socket

from npaflow.cli.options import check_port
from npaflow.errors import UsageError
from npaflow.options.features import UiOptions
from npaflow.runtime.environment import EnvVar

TOKEN_ENV = "NPAFLOW_UI_TOKEN"


def is_loopback(host: str) -> bool:
    """Whether `host` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(options: UiOptions) -> int:
    """Connect to Temporal, then serve until Ctrl-C."""
    import asyncio

    token = options.token or os.environ.get(TOKEN_ENV, "")
    if not is_loopback(options.host) and not token:
        raise UsageError(
            f"--host {options.host} serves the page beyond this machine: give it a token "
            f"(--token or {TOKEN_ENV}); readers then send 'Authorization: Bearer TOKEN'"
        )
    check_port("--port", options.port)
    temporal_ui = (
        options.temporal_ui if options.temporal_ui is not None else os.environ.get(EnvVar.UI_URL, "")
    )
    if temporal_ui and temporal_ui.partition("://")[0] not in ("http", "https"):
        where = "--temporal-ui" if options.temporal_ui is not None else EnvVar.UI_URL.value
        raise UsageError(
            f"{where} {temporal_ui[:200]!r}: give the Temporal UI's http(s) address, e.g. "
            "http://127.0.0.1:8233 (it becomes a link on every page)"
        )
    options = options.model_copy(update={"temporal_ui": temporal_ui})
    return asyncio.run(_serve(options, token))


async def _serve(options: UiOptions, token: str) -> int:
    import uvicorn

    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads
    from npaflow.temporal.client import connect_to

    client = await connect_to(options)
    settings = UiSettings(namespace=client.namespace, temporal_ui=options.temporal_ui or "", token=token)
    app = ui_app(RunReads(client), settings)
    listening = listening_socket(options.host, options.port)
    config = uvicorn.Config(app, host=options.host, port=options.port, log_level="warning", access_log=False)
    print(f"npaflow ui: http://{options.host}:{options.port}/ (Ctrl-C stops it)", flush=True)
    with listening:
        await uvicorn.Server(config).serve(sockets=[listening])
    return 0


def listening_socket(host: str, port: int) -> socket.socket:
    """The page's socket, bound here: a taken port is one line before anything says it serves.

    (uvicorn, binding it itself, logs an error and exits 1 after the page was announced.)

    Raises:
        UsageError: the port is taken, or the host is not an address of this machine.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listening = socket.socket(family, kind, proto)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
    except OSError as error:
        raise UsageError(
            f"--port {port}: cannot listen on {host}: {error.strerror or error} "
            "(hint: pick a free port with --port, and an address of this machine with --host)"
        ) from None
    return listening
