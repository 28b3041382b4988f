"""The CLI explains itself: every command says what it does, every option has help and its default."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from collections.abc import Iterator

import pytest

from npaflow import cli

pytestmark = pytest.mark.unit


def commands(
    parser: argparse.ArgumentParser, prefix: str = "npaflow"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command parser, nested ones (`deployment promote`) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from commands(sub, f"{prefix} {name}")


PARSER = cli.build_parser(every=True)
COMMANDS = dict(commands(PARSER))


def help_of(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        PARSER.parse_args(argv)
    assert stopped.value.code == 0
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_opens_with_what_it_does(name: str) -> None:
    text = help_of([*name.split()[1:], "--help"])
    description = text.split("\n\n")[1]
    assert not description.startswith(("positional arguments", "options")), text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_text(name: str) -> None:
    silent = [
        "/".join(action.option_strings) or action.dest
        for action in COMMANDS[name]._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]
    assert silent == []


def test_options_with_a_default_show_it() -> None:
    text = help_of(["submit", "--help"])
    assert re.search(r"--retries RETRIES\s+extra attempts for job failures \(default: 0\)", text)
    assert re.search(
        r"--max-wait-seconds MAX_WAIT_SECONDS\s+per wave attempt; 0 = unbounded\s+\(default: 3600\)", text
    )


def test_submit_help_lists_every_exit_code() -> None:
    text = " ".join(help_of(["submit", "--help"]).split())
    for code in (
        "0 started",
        "1 failed",
        "2 usage",
        "3 the run id is already running",
        "4 stopped",
        "75",
        "130",
    ):
        assert code in text


def test_version_names_the_installed_package() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        PARSER.parse_args(["--version"])
    assert re.fullmatch(r"npaflow \S+\n", out.getvalue())


def test_run_commands_other_than_submit_have_no_ledger_root_option() -> None:
    for name in ("status", "cancel", "pause", "resume", "logs"):
        assert "--ledger-root" not in help_of([name, "--help"])
