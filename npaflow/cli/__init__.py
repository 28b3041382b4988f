"""The `npaflow` command line: one entry point, one error handler, exit codes that mean something.

Exit codes: npaflow/cli/exits.py.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from npaflow.cli.commands import COMMANDS
from npaflow.cli.exits import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, EXIT_OUTPUT, EXIT_USAGE, StoppedFollowing
from npaflow.cli.lazy_commands import CHOSEN_PARSER, Commands
from npaflow.cli.options import SubParsers
from npaflow.printable import printable

#: argparse's words for an option given no value (`argument --every: expected one argument`).
_VALUE_MISSING = re.compile(r"argument (\S+): expected one argument")
#: argparse's words for a value outside its choices, and for words it did not expect.
_INVALID_CHOICE = re.compile(r"invalid choice: '?(.*?)'? \(choose from (.*)\)$")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (\S+)")
#: What writing to standard output fails with when the disk behind it is full.
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})  # only writes fail so


class _HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default unless its help already names one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = not (default is None or default is False or default in ("", [], argparse.SUPPRESS))
        if action.option_strings and shown and "default" not in text and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


class _FormattedCommands(Commands):
    """Commands whose parsers show defaults in their help, as the top level does."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        return super().add_parser(name, **kwargs)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 2 and a hint."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _FormattedCommands)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse, but a stray argument is reported by the command it was given to."""
        parsed, extras = self.parse_known_args(args, namespace)
        chosen = vars(parsed).pop(CHOSEN_PARSER, self)
        if extras:
            chosen.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        """One line: what was wrong and how to fix it (the usage block is behind --help)."""
        hint = _usage_hint(message, list(self._option_string_actions)) or f"run '{self.prog} --help'"
        _say(f"{self.prog}: error: {message} (hint: {hint})")
        raise SystemExit(EXIT_USAGE)


def _usage_hint(message: str, options: list[str]) -> str:
    """The likely fix of argparse's `message` ("" when there is no better one than --help)."""
    if missing := _VALUE_MISSING.match(message):  # `--every -5m` reads -5m as an option
        flag = missing.group(1).split("/")[-1]
        return f"give {flag} a value; one that starts with '-' is written {flag}=VALUE"
    if choice := _INVALID_CHOICE.search(message):  # `npaflow stauts`
        given, choices = choice.group(1), [word.strip("' ") for word in choice.group(2).split(",")]
        return _did_you_mean(given, choices)
    if stray := _UNRECOGNIZED.match(message):  # `--prioritty 3`
        return _did_you_mean(stray.group(1).split("=")[0], options)
    return ""


def _did_you_mean(given: str, known: list[str]) -> str:
    """A "did you mean 'x'?" for the one known word closest to `given` ("" when none is close)."""
    import difflib

    close = difflib.get_close_matches(given, known, n=1, cutoff=0.75)
    return f"did you mean {close[0]!r}?" if close else ""


Registrar = Callable[[SubParsers], None]


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        """Print `npaflow X.Y.Z` and exit 0, as argparse's own version action does."""
        from importlib import metadata

        try:
            version = metadata.version("npaflow")
        except metadata.PackageNotFoundError:
            version = "(not installed)"
        print(f"npaflow {version}")
        parser.exit()


def build_parser(extra: Sequence[Registrar] = (), *, every: bool = False) -> argparse.ArgumentParser:
    """Assemble the CLI: every command, the worker's too (npaflow/cli/commands/__init__.py).

    `extra` registers more commands (the tests add one that fails on purpose).

    A command's arguments are added when it is chosen (`every`: all of them now).
    """
    parser: argparse.ArgumentParser = _Parser(
        prog="npaflow", description="Durable GPU pipelines on Temporal + SkyPilot"
    )
    parser.add_argument("--version", action=_Version)
    commands: Commands = parser.add_subparsers(dest="command", metavar="COMMAND")  # type: ignore[assignment]
    commands.required = True
    commands.add_lazily(COMMANDS)
    for registrar in extra:
        registrar(commands)
    if every:
        commands.fill_all()
    return parser


def run(argv: Sequence[str] | None = None, extra: Sequence[Registrar] = ()) -> int:
    """Parse arguments, run the command, and map errors to exit codes."""
    parser = build_parser(extra)
    args = parser.parse_args(argv)
    from npaflow.errors import (  # only now: `--help` and `--version` never load pydantic
        NpaflowError,
        SpecError,
    )

    try:
        return int(args.handler(args) or 0)
    except SpecError as exc:
        if getattr(args, "json", False):
            print(
                json.dumps({"valid": False, "errors": [issue.model_dump() for issue in exc.issues]}, indent=2)
            )
        else:
            for issue in exc.issues:
                _say(issue.render())
        return EXIT_USAGE
    except NpaflowError as exc:
        _say(f"npaflow: error: {exc}")
        return EXIT_USAGE
    except BrokenPipeError:
        return _closed_pipe()
    except StoppedFollowing as stopped:
        sys.stderr.write(f"\nnpaflow: {stopped}\n")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        sys.stderr.write("\nnpaflow: interrupted (nothing was cancelled)\n")
        return EXIT_INTERRUPTED
    except OSError as exc:
        if exc.filename is None:  # a socket, a pipe or standard output: not a path the user gave
            raise
        _say(f"npaflow: error: {exc.filename}: {exc.strerror or exc}")
        return EXIT_USAGE
    except Exception as exc:
        text = _server_refusal(exc) or _unreadable_answer(exc)
        if text is None:
            raise
        _say(f"npaflow: error: {text}")
        return EXIT_USAGE


def _say(line: str) -> None:
    """An error line on stderr, its control characters shown as escapes.

    What a user or a job wrote into it (a run id, a name) never retitles the terminal.
    """
    sys.stderr.write(printable(line) + "\n")


def _unreadable_answer(exc: BaseException) -> str | None:
    """The one-line text of an answer this npaflow cannot read (a worker of another version)."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(exc, pydantic.ValidationError):
        return None
    from npaflow.temporal.errors import unreadable_answer_text

    return unreadable_answer_text(exc)


def _server_refusal(exc: BaseException) -> str | None:
    """The one-line text of a Temporal server error (None for anything else: a bug shows its trace)."""
    service = sys.modules.get("temporalio.service")
    if service is None or not isinstance(exc, service.RPCError):
        return None
    from npaflow.temporal.errors import rpc_error_text

    return rpc_error_text(exc)


def _output_failed(exc: OSError) -> int:
    """Standard output cannot take what the command printed (`npaflow list > /dev/full`)."""
    with contextlib.suppress(OSError):
        reason = exc.strerror or exc
        sys.stderr.write(f"npaflow: error: cannot write the output: {reason} (free space or redirect it)\n")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # what is still buffered cannot be written either
    return EXIT_OUTPUT


def _closed_pipe() -> int:
    """The reader went away (`npaflow status X | head -1`): stop quietly, as git does."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere, silently
    return EXIT_CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point; exits hard after flushing (temporalio exit crash, sdk-python #300)."""
    try:
        code = run(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except OSError as exc:
        if exc.filename is not None or exc.errno not in _OUTPUT_ERRNOS:
            raise
        code = _output_failed(exc)
    if "npaflow.temporal.tracing" in sys.modules:
        sys.modules["npaflow.temporal.tracing"].flush_traces()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _closed_pipe()
    except OSError as exc:
        code = _output_failed(exc)
    sys.stderr.flush()
    os._exit(code)
