"""Where a token stands in a `shell:` command, and a value written so bash reads it there as data.

An item is data a stage wrote. Substituted into a member's shell command as is,
`a; rm -rf x` would run as code. Each item token's position is classified (bare,
inside "...", inside '...', or opaque: backticks, `${...}`, `$((...))`, `((...))`,
`$'...'`, a comment, a here-document, right after `$` or a backslash) and its value quoted for that
position, so the shell's word is exactly the value. An opaque position takes only
shell-inert values, and so does every token of a command that hands text to another
parser (`eval`, `sh -c`, `ssh`: `reparses`); a command that evaluates words as
arithmetic takes no value holding a substitution (`evaluates_arithmetic`). Inert
values are written unchanged, so a command over ids, paths and numbers renders byte
for byte as it always did.
"""

from __future__ import annotations

import re
import shlex
from enum import StrEnum

#: Stands for a token while its command is scanned (a command holding it is opaque throughout).
MARK = "\x00"
_INERT = re.compile(r"[A-Za-z0-9_@%+=:,./-]*")
_WORD_BREAK = " \t\n;&|()<>"
_ARITHMETIC = re.compile(
    r"-(?:eq|ne|lt|le|gt|ge)\b|\blet\b|\b(?:declare|typeset|local|readonly|export)\s+-\w*i"
)
#: The shells whose `-c SCRIPT` an item value could reach as code, and their options taking a value.
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
_TAKING_A_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SUBSTITUTION = re.compile(r"\$\(|\$\{|`")
_REPARSE = re.compile(
    r"(?:^|[;&|({`]|\$\(|\b(?:then|do|else)\s)\s*eval\s"  # eval as a command
    r"|\b(?:ba|da|z|k)?sh\b[^\n;|&]*?\s-\w*c\b"  # a shell handed a script: bash -c, sh -ec
    r"|(?:^|[\s;&|(])(?:ssh|su|watch|parallel|script)\s",  # a command line they run through a shell
    re.MULTILINE,
)


class Quoting(StrEnum):
    """What quotes a token stands inside, as bash parses the command."""

    BARE = "bare"
    DOUBLE = "double"
    SINGLE = "single"
    OPAQUE = "opaque"


def is_inert(value: str) -> bool:
    """True when the value means the same to bash in any position (letters, digits, `_@%+=:,./-`)."""
    return _INERT.fullmatch(value) is not None


def placed(value: str, quoting: Quoting) -> str | None:
    """`value` written for its position so bash reads it as one piece of data (None: it cannot be)."""
    if is_inert(value):
        return value
    if quoting is Quoting.BARE:
        return shlex.quote(value)
    if quoting is Quoting.DOUBLE:
        return re.sub(r'([\\"$`])', r"\\\1", value)
    if quoting is Quoting.SINGLE:
        return value.replace("'", "'\\''")
    return None


def evaluates_arithmetic(command: str) -> bool:
    """True when the command has bash evaluate words as arithmetic (`[[ A -eq B ]]`, `let`, `declare -i`).

    There bash expands a `$(...)` inside an array subscript of the *value* (`a[$(cmd)]`),
    however the word was quoted, so such a command takes no value holding a substitution.
    """
    return _ARITHMETIC.search(command) is not None


def reparses(command: str) -> bool:
    """True when the command hands text to another parser (`eval`, `bash -c`, `ssh`, `su`, `watch`).

    A value quoted for this shell is unquoted once and parsed again there, so in such a
    command every token stands where no quoting holds.
    """
    return _REPARSE.search(command) is not None


def substitutes(value: str) -> bool:
    """True when the value holds what bash would expand as code in arithmetic: `$(`, `${` or a backtick."""
    return _SUBSTITUTION.search(value) is not None


def shell_scripts(argv: tuple[str, ...]) -> set[int]:
    """Where `argv` hands a script to a shell (`bash -c SCRIPT`, `sh -ec SCRIPT`): placed like run.shell."""
    if not argv or argv[0].rpartition("/")[2] not in _SHELLS:
        return set()
    at = 1
    while at < len(argv) and argv[at][:1] in "-+" and argv[at] != "--":
        if argv[at][:2] not in ("--", "+-") and "c" in argv[at] and argv[at][0] == "-":
            return {at + 1}
        at += 2 if argv[at] in _TAKING_A_VALUE else 1
    return set()


def mark_quotings(command: str) -> list[Quoting]:
    """The quoting at each MARK of `command`, in order (all opaque when the quotes do not close)."""
    marks = command.count(MARK)
    scan = _Scan(command)
    scan.run()
    if scan.stack != ["bare"] or len(scan.found) != marks:
        return [Quoting.OPAQUE] * marks
    return scan.found


class _Scan:
    """One pass over a bash command tracking quotes, `$(...)` levels and opaque stretches."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0
        self.stack: list[str] = ["bare"]
        self.depth: list[int] = [0]  # open parentheses per `$(` level
        self.found: list[Quoting] = []
        self.rest_opaque = False

    def run(self) -> None:
        while self.at < len(self.text):
            top = self.stack[-1]
            if top == "single":
                self.at += self._in_single()
            else:
                self.at += self._in_double() if top == "double" else self._bare()

    def _mark(self, quoting: Quoting) -> int:
        after_dollar = self.at > 0 and self.text[self.at - 1] == "$"
        self.found.append(Quoting.OPAQUE if self.rest_opaque or after_dollar else quoting)
        return 1

    def _in_single(self) -> int:
        char = self.text[self.at]
        if char == MARK:
            return self._mark(Quoting.SINGLE)
        if char == "'":
            self.stack.pop()
        return 1

    def _in_double(self) -> int:
        char, ahead = self.text[self.at], self.text[self.at : self.at + 3]
        if char == MARK:
            return self._mark(Quoting.DOUBLE)
        if char == "\\":
            return self._escaped()
        if char == '"':
            self.stack.pop()
            return 1
        return 1 if ahead.startswith("$'") else self._opening(ahead) or 1  # $'...' is ANSI-C only bare

    def _bare(self) -> int:
        text, at = self.text, self.at
        char, ahead = text[at], text[at : at + 3]
        if char == MARK:
            return self._mark(Quoting.BARE)
        if char == "\\":
            return self._escaped()
        if char in "'\"":
            self.stack.append("single" if char == "'" else "double")
            return 1
        if char == "#" and (at == 0 or text[at - 1] in _WORD_BREAK):
            return self._opaque_until(text.find("\n", at))
        if ahead.startswith("(("):  # an arithmetic command: quotes inside do not hold
            return self._opaque_until(text.find("))", at + 2), closer=2)
        if ahead.startswith("<<") or _keyword(text, at, "case"):
            self.rest_opaque = True  # here-documents and case patterns: no quoting is trusted past here
            return 1
        return self._opening(ahead) or self._parenthesis(char)

    def _escaped(self) -> int:
        if self.text[self.at + 1 : self.at + 2] == MARK:
            self.found.append(Quoting.OPAQUE)  # `\` then a value: its first character would be escaped
        return 2

    def _opening(self, ahead: str) -> int:
        """Enter `$(`, or step over an opaque stretch; 0 when `ahead` opens nothing."""
        text, at = self.text, self.at
        if ahead.startswith("$(("):
            return self._opaque_until(text.find("))", at + 3), closer=2)
        if ahead.startswith("$("):
            self.stack.append("bare")
            self.depth.append(0)
            return 2
        if ahead.startswith("${"):
            return self._opaque_until(text.find("}", at + 2))
        if ahead.startswith("$'"):
            return self._opaque_until(_unescaped(text, "'", at + 2))
        if ahead.startswith("`"):
            return self._opaque_until(_unescaped(text, "`", at + 1))
        return 0

    def _parenthesis(self, char: str) -> int:
        if len(self.stack) > 1 and char in "()":
            self.depth[-1] += 1 if char == "(" else -1
            if self.depth[-1] < 0:
                self.stack.pop()
                self.depth.pop()
        return 1

    def _opaque_until(self, end: int, closer: int = 1) -> int:
        """Every mark up to `end` (the closer's index; -1: the end of the command) is opaque."""
        stop = len(self.text) if end < 0 else end
        for _ in range(self.text.count(MARK, self.at, stop)):
            self.found.append(Quoting.OPAQUE)
        if end < 0:
            self.rest_opaque = True
        return max(1, stop - self.at + closer)


def _keyword(text: str, at: int, word: str) -> bool:
    """True when `word` stands at `at` as a word of its own."""
    end = at + len(word)
    return (
        text.startswith(word, at)
        and (at == 0 or text[at - 1] in _WORD_BREAK)
        and (end == len(text) or text[end] in _WORD_BREAK)
    )


def _unescaped(text: str, quote: str, start: int) -> int:
    """The index of the next `quote` not preceded by a backslash (-1: none)."""
    at = start
    while (at := text.find(quote, at)) > 0 and text[at - 1] == "\\":
        at += 1
    return at
