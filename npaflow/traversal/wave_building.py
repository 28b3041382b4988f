"""Turning materialized steps into `Wave`s: a serial step, or one batch of a group occurrence."""

from __future__ import annotations

from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave, WaveKind
from npaflow.waves import WaveKey, WaveMember


def serial_wave(step: PlanStep, *, sequence: int, occurrence: int) -> Wave:
    """One serial step as its own wave, labelled `state` or `state-iteration`."""
    return Wave(
        sequence=sequence,
        kind=WaveKind.SERIAL,
        label=step.state + (f"-{step.iteration}" if step.iteration else ""),
        steps=(step,),
        key=WaveKey(sequence=sequence, members=(wave_member(step),)),
        occurrence=occurrence,
    )


def batch_wave(
    group: str,
    steps: tuple[PlanStep, ...],
    *,
    sequence: int,
    occurrence: int,
    batch: tuple[int, int],
    concurrency: int,
) -> Wave:
    """One batch (`batch` = index, count) of a group occurrence; a batch of one runs serially."""
    index, count = batch
    return Wave(
        sequence=sequence,
        key=WaveKey(sequence=sequence, group=group, members=tuple(wave_member(s) for s in steps)),
        kind=WaveKind.PARALLEL if len(steps) > 1 else WaveKind.SERIAL,
        group=group,
        label=group,
        steps=steps,
        occurrence=occurrence,
        batch_index=index,
        batch_count=count,
        max_concurrency=concurrency,
    )


def wave_member(step: PlanStep) -> WaveMember:
    """The member a step is in a wave key: its loop label, state and iteration."""
    return WaveMember(loop_label=step.loop_label, state=step.state, iteration=step.iteration)
