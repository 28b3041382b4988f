"""Subcommands registered by name and help, their modules imported only when chosen.

`npaflow --help` lists every command without importing one; `npaflow submit ...`
imports only `submit`'s module (and what it needs), so the spec commands start
as fast as Python and their own imports allow (bench/cli_bench.py).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

#: The namespace attribute naming the innermost command chosen, whose usage a stray argument gets.
CHOSEN_PARSER = "_chosen_parser"


class Command(NamedTuple):
    """A subcommand: what `--help` says of it, and the module whose `add(parser)` fills it in."""

    name: str
    help: str
    module: str
    epilog: str | None = None


class Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subcommands whose `--help` opens with what the command does, filled in when chosen."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """A subcommand whose description, unless given, is its help as a sentence."""
        if "help" in kwargs and "description" not in kwargs:
            text = kwargs["help"]
            kwargs["description"] = text[:1].upper() + text[1:] + "."
        return super().add_parser(name, **kwargs)  # type: ignore[no-any-return]

    def add_lazily(self, commands: Sequence[Command]) -> None:
        """Register each command by name and help; its arguments wait until it is chosen."""
        for command in commands:
            self.add_parser(command.name, help=command.help, epilog=command.epilog)
            self._waiting()[command.name] = command.module

    def fill(self, name: str) -> None:
        """Import the command's module and let it add its arguments, once."""
        module = self._waiting().pop(name, None)
        if module is not None:
            importlib.import_module(module).add(self._name_parser_map[name])

    def fill_all(self) -> None:
        """Every command's arguments (the help tests walk them all)."""
        for name in list(self._waiting()):
            self.fill(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Fill in the chosen command, then parse its arguments as argparse does."""
        if isinstance(values, list) and values:
            self.fill(str(values[0]))
            chosen = self._name_parser_map.get(str(values[0]))
            if chosen is not None:  # a deeper command, parsed next, overrides it
                setattr(namespace, CHOSEN_PARSER, chosen)
        super().__call__(parser, namespace, values, option_string)

    def _waiting(self) -> dict[str, str]:
        """Command name -> module still to import (set here: argparse builds the action itself)."""
        if not hasattr(self, "_waiting_modules"):
            self._waiting_modules: dict[str, str] = {}
        return self._waiting_modules


def worker_command(module: str, function: str) -> Callable[[Any], int]:
    """A command whose body lives in the worker package, imported by name only when it runs.

    The CLI is the console script's front door; the worker's commands (`worker`,
    `dev`, `replay-check`, `deployment`) are the outer layer's, so the CLI names
    them here and loads them on demand, as it loads its own command modules.
    """

    def run(options: Any) -> int:
        return int(getattr(importlib.import_module(module), function)(options))

    return run
