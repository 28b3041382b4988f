"""Every `npaflow` command, one module each: its parser and its named handler.

A module's `add` registers the command; the handler it sets imports what the
command needs only when it runs, so the offline commands (`validate-spec`,
`plan-spec`, `render`, `schema`, `init`) never load the Temporal client.
`worker/cli.py` adds the worker's commands (`worker`, `dev`, `replay-check`,
`deployment`) from the outer layer.
"""

from __future__ import annotations

from npaflow.cli.commands import (
    artifacts,
    cache,
    cancel,
    init,
    list_runs,
    logs,
    pause,
    plan_spec,
    preflight_images,
    quota,
    render,
    report,
    resume,
    schedule,
    schema,
    status,
    submit,
    ui,
    validate_spec,
)
from npaflow.cli.options import SubParsers

#: In `npaflow --help` order.
COMMANDS = (
    init,
    validate_spec,
    plan_spec,
    schema,
    render,
    preflight_images,
    submit,
    schedule,
    artifacts,
    cache,
    quota,
    list_runs,
    status,
    report,
    cancel,
    pause,
    resume,
    logs,
    ui,
)


def add_all(commands: SubParsers) -> None:
    """Register every command."""
    for command in COMMANDS:
        command.add(commands)
