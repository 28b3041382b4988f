"""Every `npaflow` command: its name and help here, its arguments and handler in a module of its own.

A module's `add(parser)` fills in the command's arguments when the command is
chosen (npaflow/cli/lazy_commands.py), and the handler it sets imports what the
command needs only when it runs: `npaflow --help` imports no command module, and
the offline commands (`validate-spec`, `plan-spec`, `render`, `schema`, `init`)
never load the Temporal client. The worker's commands (`worker`, `dev`,
`replay-check`, `deployment`) are parsed here and carried out by the worker
package, loaded by name when one runs (`lazy_commands.worker_command`).
"""

from __future__ import annotations

from npaflow.cli.lazy_commands import Command

PACKAGE = "npaflow.cli.commands"

#: In `npaflow --help` order.
COMMANDS = (
    Command(
        "init",
        "write a commented starter spec, the shipped examples and the spec's JSON Schema",
        f"{PACKAGE}.init",
    ),
    Command("validate-spec", "check a spec; exit 2 when invalid", f"{PACKAGE}.validate_spec"),
    Command("plan-spec", "preview the steps (or waves) a run would take", f"{PACKAGE}.plan_spec"),
    Command(
        "schema", "print the JSON Schema of npa.workflow/v0.0.1 specs (for editors)", f"{PACKAGE}.schema"
    ),
    Command("render", "write the SkyPilot YAML of every wave", f"{PACKAGE}.render"),
    Command(
        "preflight-images",
        "resolve every image the spec launches to a digest (ok, not_found, forbidden, unavailable)",
        f"{PACKAGE}.preflight_images",
        epilog="exit codes: 0 every image verified, 2 a usage or validation error or any image that "
        "cannot be verified (all listed, each with its fix)",
    ),
    Command(
        "submit",
        "validate a spec and start a durable run",
        f"{PACKAGE}.submit",
        epilog="exit codes: 0 started (with --wait: succeeded), 1 failed, 2 usage or validation error "
        "(nothing started), 3 the run id is already running (see --attach), 4 stopped following"
        " by Ctrl-C (the run continues), 75 failed for lack of capacity (try again later), 130 "
        "cancelled or terminated",
    ),
    Command("schedule", "run a spec on a cron or interval (Temporal Schedules)", f"{PACKAGE}.schedule"),
    Command(
        "artifacts",
        "a run's declared outputs (present or missing now), decisions read and trigger objects",
        f"{PACKAGE}.artifacts",
    ),
    Command("cache", "the stage cache: entries, why a state missed, purge", f"{PACKAGE}.cache"),
    Command("quota", "GPU quota pools: capacity, teams, holders and waiters", f"{PACKAGE}.quota"),
    Command(
        "list", "list npaflow's runs, newest first, with spec, phase and GPU-hours", f"{PACKAGE}.list_runs"
    ),
    Command("status", "show a run's live status", f"{PACKAGE}.status"),
    Command(
        "report",
        "write a run's report.html: its graph coloured by what happened, timeline, decisions, GPU-hours",
        f"{PACKAGE}.report",
    ),
    Command("cancel", "cancel a run's jobs and end it", f"{PACKAGE}.cancel"),
    Command("pause", "stop launching new waves", f"{PACKAGE}.pause"),
    Command("resume", "continue a paused/suspended run, or restart a failed one", f"{PACKAGE}.resume"),
    Command("logs", "print the logs of a run's jobs, read where they run", f"{PACKAGE}.logs"),
    Command(
        "ui",
        "serve a read-only web page of the runs: each run's live graph, timeline and decisions",
        f"{PACKAGE}.ui",
    ),
    Command("worker", "run a worker (config from flags or environment)", f"{PACKAGE}.worker"),
    Command("dev", "local Temporal dev server + UI + a local-backend worker", f"{PACKAGE}.dev"),
    Command(
        "replay-check",
        "replay recorded histories against this code (exit 1 on nondeterminism)",
        f"{PACKAGE}.replay_check",
    ),
    Command("deployment", "Worker Deployment versions: promote, status", f"{PACKAGE}.deployment"),
)
