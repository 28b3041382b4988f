"""The two pydantic configurations npaflow's documents use, so each kind is declared once.

`FROZEN`: a message, view or spec model, built once and never edited. `STRICT`:
a ledger record the run updates by copy. Both refuse unknown fields, so a typo
in a document is an error instead of a silently ignored key.
"""

from __future__ import annotations

from pydantic import ConfigDict

FROZEN = ConfigDict(frozen=True, extra="forbid")
STRICT = ConfigDict(extra="forbid")
