"""The CLI's shared arguments (spec, --var, --catalog, connection, run id) and `--var` parsing.

Light on purpose: every command loads it before its handler runs; loading a
spec from these arguments is npaflow/cli/spec_loading.py.
"""

from __future__ import annotations

import argparse
from enum import StrEnum
from typing import TYPE_CHECKING

from npaflow.integers import plain_int
from npaflow.ledger_paths import root_problem

if TYPE_CHECKING:
    #: What `add_subparsers()` returns; commands register themselves on it.
    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    SubParsers = argparse._SubParsersAction


def nonempty(text: str) -> str:
    """An argparse type for names and ids: an empty one would silently mean "every" or "none"."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def storage_root(text: str) -> str:
    """An argparse type for a ledger or cache root: s3://BUCKET/PREFIX or an absolute directory."""
    if problem := root_problem(text):
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


def count(text: str) -> int:
    """An argparse type for how many: a whole number, 0 or more."""
    number = plain_int(text.strip())
    if number is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number 0 or more")
    return number


def check_port(flag: str, number: int) -> None:
    """Refuse a TCP port to listen on outside 1-65535, in one line.

    Raises:
        UsageError: naming the flag.
    """
    from npaflow.errors import UsageError  # not at import: `--help` never loads pydantic

    if not 0 < number < 65536:
        raise UsageError(f"{flag} {number}: give a port between 1 and 65535")


def add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    """Add SPEC, --var and --catalog to a subcommand."""
    parser.add_argument(
        "spec",
        metavar="SPEC",
        type=nonempty,
        help="path to an npa.workflow/v0.0.1 YAML spec (- reads it from standard input)",
    )
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="K=V",
        help="override a config key (repeatable); validated again after merging",
    )
    parser.add_argument(
        "--allow-new-vars",
        action="store_true",
        help="accept --var keys that the spec's config does not declare and nothing reads",
    )
    parser.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="PATH",
        help="extra ToolCatalog YAML (repeatable, later wins)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def add_connection_arguments(parser: argparse.ArgumentParser, *, ledger_root: bool = True) -> None:
    """--address, --namespace, --profile, --task-queue, and --ledger-root where it matters."""
    parser.add_argument(
        "--address", type=nonempty, help="Temporal address (TEMPORAL_ADDRESS, default 127.0.0.1:7233)"
    )
    parser.add_argument(
        "--namespace", type=nonempty, help="Temporal namespace (TEMPORAL_NAMESPACE, default default)"
    )
    parser.add_argument(
        "--profile",
        type=nonempty,
        help="profile of the Temporal client config file (TEMPORAL_PROFILE; "
        "file TEMPORAL_CONFIG_FILE, API key and TLS as for the temporal CLI)",
    )
    parser.add_argument(
        "--task-queue", type=nonempty, help="task queue (NPAFLOW_TASK_QUEUE, default npaflow)"
    )
    if ledger_root:
        parser.add_argument(
            "--ledger-root",
            type=storage_root,
            help="shared ledger root of runs without config.bucket (NPAFLOW_LEDGER_ROOT): the "
            "directory or s3:// prefix workers write ledgers under; give the workers' value so "
            "the run's ledger location is shown right",
        )


def add_run_id_arguments(parser: argparse.ArgumentParser) -> None:
    """RUN_ID and the connection flags (no --ledger-root: the run itself knows where its ledger is)."""
    parser.add_argument(
        "run_id", metavar="RUN_ID", type=nonempty, help="the run id (= its Temporal workflow id)"
    )
    add_connection_arguments(parser, ledger_root=False)


class Overlap(StrEnum):
    """What a schedule does when its previous run is still going."""

    SKIP = "skip"
    BUFFER_ONE = "buffer-one"
    ALLOW_ALL = "allow-all"


def add_items_argument(parser: argparse.ArgumentParser) -> None:
    """`--assume-items FILE`: plan each `forEach:` group over this list, as a run would read it."""
    parser.add_argument(
        "--assume-items",
        metavar="FILE",
        help="a JSON list to plan every forEach group with (or {group: list}); without it a "
        "group plans as its member template, its items read at run time",
    )


def add_cap_argument(parser: argparse.ArgumentParser) -> None:
    """`--max-concurrency`: a cap on every group's batch, of a run or of a preview (plan-spec, render)."""
    parser.add_argument(
        "--max-concurrency",
        type=count,
        default=0,
        metavar="N",
        help="cap every group's batch size (0 = each group's own bound)",
    )
