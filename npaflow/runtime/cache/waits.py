"""A wave waiting for another run's cache flight: what `status`, `--wait`, the page and the UI say.

Two runs that miss the same key do not both launch: the second waits until the
first (the holder) has stored its entry or given the key back (DESIGN 20,
workflows_def/cache/flights.py). While it waits nothing of its own runs, so it
says whom it waits for; the wait is not history (no command records it).
"""

from __future__ import annotations

from pydantic import BaseModel

from npaflow.presets import FROZEN

#: Hex digits of a key a wait names (enough to find it in `npaflow cache list`).
SHOWN_KEY_DIGITS = 12


class CacheWait(BaseModel):
    """One wave waiting for the run that holds one of its cache keys."""

    model_config = FROZEN

    wave: str  # the wave key
    states: list[str]  # each once (a fan-out batch's template is not repeated per member)
    key: str  # the cache key it waits for
    holder: str = ""  # the run holding the key ("" when the flight did not say)
    since: str = ""

    def text(self) -> str:
        """`prep waits for run c1, which is making the same cache entry (key sha256:0123…): ...`."""
        states = ", ".join(self.states)
        who = f"run {self.holder}" if self.holder else "another run"
        key = self.key.removeprefix("sha256:")[:SHOWN_KEY_DIGITS]
        return (
            f"{states} waits for {who}, which is making the same cache entry (key {key}); "
            "it is served from that entry, or launches if none is stored, once that run lets go"
        )

    def short(self) -> str:
        """`run c1's cache entry (prep)`: what `npaflow list` says the run waits for."""
        who = f"run {self.holder}'s" if self.holder else "another run's"
        return f"{who} cache entry ({', '.join(self.states)})"
