"""`npaflow ui`: a small read-only web app over Temporal: runs, and each run's live graph and timeline.

Loopback by default. Served elsewhere (`--host`) it needs a token (`--token` or
NPAFLOW_UI_TOKEN): a page that shows jobs and logs is not left open by accident.
"""

from __future__ import annotations

import argparse
import ipaddress
import os

from npaflow.cli.options import check_port
from npaflow.errors import UsageError
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


def serve(args: argparse.Namespace) -> int:
    """Connect to Temporal, then serve until Ctrl-C."""
    import asyncio

    token = args.token or os.environ.get(TOKEN_ENV, "")
    if not is_loopback(args.host) and not token:
        raise UsageError(
            f"--host {args.host} serves the page beyond this machine: give it a token "
            f"(--token or {TOKEN_ENV}); readers then send 'Authorization: Bearer TOKEN'"
        )
    check_port("--port", args.port)
    return asyncio.run(_serve(args, token))


async def _serve(args: argparse.Namespace, token: str) -> int:
    import uvicorn

    from npaflow.cli.temporal_client import connect_from
    from npaflow.cli.ui.app import UiSettings, ui_app
    from npaflow.cli.ui.reads import RunReads

    client = await connect_from(args)
    temporal_ui = args.temporal_ui if args.temporal_ui is not None else os.environ.get(EnvVar.UI_URL, "")
    settings = UiSettings(namespace=client.namespace, temporal_ui=temporal_ui, token=token)
    app = ui_app(RunReads(client), settings)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    print(f"npaflow ui: http://{args.host}:{args.port}/ (Ctrl-C stops it)", flush=True)
    try:
        await server.serve()
    except OSError as error:
        raise UsageError(f"--port {args.port}: cannot listen on {args.host}: {error.strerror}") from None
    return 0
