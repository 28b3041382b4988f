"""How the stage cache served a run: hits, misses and the GPU-hours the hits did not spend.

Kept as a running total by `RunProgress` (each attempt's change adds what it
changed), so the UI's current details cost nothing per wave of the run's length.
"""

from __future__ import annotations

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
        """`4 hits (saved 1.250 GPU-h), 2 misses`; "" when nothing was cached."""
        if not (self.hits or self.misses):
            return ""
        return f"{self.hits} hits (saved {gpu_hours_text(self.gpu_hours_saved)} GPU-h), {self.misses} misses"
