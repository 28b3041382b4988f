"""Text from outside (a job's decision file, an object key) made safe to print on a terminal.

A job decides what its decision artifact says, and anyone who can write to a watched
prefix names its objects; printed as is, an escape sequence in either would retitle,
recolour or rewrite the reader's terminal, and a bidi override would make a line
read differently from what it says. The ledger keeps such values exactly as read;
only what people are shown is escaped.
"""

from __future__ import annotations

import html
import re

#: C0 controls but newline and tab, DEL, C1 controls, and the bidi overrides and isolates.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    r"""`text` with each control character written as its escape (`\x1b`), lines and tabs kept."""
    return _escape(_UNPRINTABLE, text)


def html_text(text: str) -> str:
    """`text` for a page: markup escaped, and control characters shown as their escapes.

    `html.escape` alone leaves an escape sequence or a bidi override in the page, where it
    is invisible (or, in an SVG read as XML, makes the whole drawing invalid).
    """
    return html.escape(printable(text))


#: The same, but carriage returns stay: a progress bar redraws its line with them.
_UNPRINTABLE_BUT_CR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: Select Graphic Rendition (colour, bold): the one escape sequence logs need and nothing abuses.
_COLOUR = re.compile(r"\x1b\[[0-9;:]{0,64}m")


def colours_kept(text: str) -> str:
    """A job's log for a terminal: colours and carriage returns kept, every other control escaped.

    A job's output is its own, but a title change (OSC), a cleared screen or a moved
    cursor would act on the reader's terminal; `npaflow logs --raw` prints it as is.
    """
    pieces, start = [], 0
    for colour in _COLOUR.finditer(text):
        pieces += [_escape(_UNPRINTABLE_BUT_CR, text[start : colour.start()]), colour.group()]
        start = colour.end()
    return "".join([*pieces, _escape(_UNPRINTABLE_BUT_CR, text[start:])])


def _escape(unprintable: re.Pattern[str], text: str) -> str:
    r"""Each character `unprintable` matches written as its Python escape (`\x1b`)."""
    return unprintable.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def clipped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how long it was: a free-text field's bound."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters, clipped)"
