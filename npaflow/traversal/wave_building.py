"""Turning materialized steps into `Wave`s: a serial step, or one batch of a group occurrence."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from npaflow.document.models import State
from npaflow.steps import PlanStep
from npaflow.tokens import resolve_config_int
from npaflow.traversal.models import FanOutMark, Wave, WaveKind
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
    fan_out: FanOutMark | None = None,
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
        fan_out=fan_out,
    )


def group_concurrency(group: State, members: int, config: Mapping[str, JsonValue]) -> int:
    """How many members of the group run at once: its `maxConcurrency`, else all of them."""
    if group.max_concurrency is None:
        return members
    return max(1, resolve_config_int(group.max_concurrency, config, "maxConcurrency"))


def wave_member(step: PlanStep) -> WaveMember:
    """The member a step is in a wave key: its loop label, state and iteration."""
    return WaveMember(loop_label=step.loop_label, state=step.state, iteration=step.iteration, item=step.item)
