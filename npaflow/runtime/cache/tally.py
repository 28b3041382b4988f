"""How the stage cache served a run: hits, misses and the GPU-hours the hits did not spend.

Kept as a running total by `RunProgress` (each attempt's change adds what it
changed), so the UI's current details cost nothing per wave of the run's length.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from npaflow.presets import STRICT
from npaflow.runtime.ledger import CachedStep
from npaflow.runtime.usage import gpu_hours_text


class CacheTally(BaseModel):
    """Cached steps that hit or missed, and the GPU-hours the hits saved."""

    model_config = STRICT

    hits: int = 0
    misses: int = 0
    gpu_hours_saved: float = 0.0

    @classmethod
    def of(cls, steps: list[CachedStep]) -> CacheTally:
        """One attempt's cached steps (or several attempts')."""
        hits = [step for step in steps if step.hit]
        return cls(
            hits=len(hits),
            misses=len(steps) - len(hits),
            gpu_hours_saved=sum(step.gpu_hours_saved for step in hits),
        )

    def add(self, other: CacheTally, sign: int = 1) -> None:
        """Count (or, with sign -1, uncount) another tally."""
        self.hits += sign * other.hits
        self.misses += sign * other.misses
        self.gpu_hours_saved += sign * other.gpu_hours_saved

    def text(self) -> str:
        """`4 hits (saved 1.250 GPU-h), 1 miss`; "" when nothing was cached."""
        if not (self.hits or self.misses):
            return ""
        hits = f"{self.hits} hit" + ("" if self.hits == 1 else "s")
        misses = f"{self.misses} miss" + ("" if self.misses == 1 else "es")
        return f"{hits} (saved {gpu_hours_text(self.gpu_hours_saved)} GPU-h), {misses}"


def served_words(steps: Sequence[CachedStep], job_id: str) -> str:
    """How the cache served an attempt, as status and the `--wait` stream say it ("" when it did not).

    `from the cache: run R job J (saved 0.0120 GPU-h)` for a wave the cache served whole;
    `2 steps from the cache (saved …)` beside the job of a batch that launched its misses.
    """
    hits = [step for step in steps if step.hit]
    if not hits:
        return ""
    saved = f"saved {gpu_hours_text(sum(step.gpu_hours_saved for step in hits))} GPU-h"
    if job_id:
        return f"{len(hits)} step{'' if len(hits) == 1 else 's'} from the cache ({saved})"
    return f"from the cache: run {hits[0].source_run} job {hits[0].source_job} ({saved})"
