"""`npaflow ui`: the runs and each run's live graph and timeline, in a browser."""

from __future__ import annotations

import argparse

from npaflow.cli.options import add_connection_arguments


def add(ui: argparse.ArgumentParser) -> None:
    """The arguments of `ui`."""
    add_connection_arguments(ui, ledger_root=False)
    ui.add_argument("--port", type=int, default=8234, help="port to serve on (default 8234)")
    ui.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default loopback; others need --token)"
    )
    ui.add_argument("--token", default="", help="bearer token every reader must send (NPAFLOW_UI_TOKEN)")
    ui.add_argument(
        "--temporal-ui",
        default=None,
        help="the Temporal UI's base URL, to link each run there (NPAFLOW_UI_URL; '' for no link)",
    )
    ui.set_defaults(handler=run_ui)


def run_ui(args: argparse.Namespace) -> int:
    """The handler: the web server and Temporal client are imported only now."""
    from npaflow.cli.ui import serve
    from npaflow.options.features import UiOptions

    return serve(UiOptions.parsed(args))
