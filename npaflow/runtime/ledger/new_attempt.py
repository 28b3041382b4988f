"""A new wave attempt's ledger record, as the plan made it, written before its launch."""

from __future__ import annotations

from collections.abc import Sequence

from npaflow.images import LaunchImage
from npaflow.runtime.ledger.attempt import Credentials, WaveAttemptRecord
from npaflow.runtime.ledger.records import PlannedStep
from npaflow.runtime.usage import task_shapes
from npaflow.traversal.models import Wave


def new_attempt(
    wave: Wave, attempt: int, *, now: str, images: Sequence[LaunchImage] = (), launches: Wave | None = None
) -> WaveAttemptRecord:
    """The record of `attempt` of `wave`: its members as planned (with the image each launches).

    `launches`: the wave as its job runs it (a batch without the members the cache served).
    """
    launched = list(images) + [LaunchImage()] * (len(wave.steps) - len(images))
    return WaveAttemptRecord(
        key=wave.key,
        states=wave.states,
        items=[step.item_label for step in wave.steps] if wave.fan_out is not None else [],
        kind=wave.kind,
        group=wave.group,
        attempt=attempt,
        started_at=now,
        outputs=[a for step in wave.steps for a in step.outputs],
        scheduler_fence_sequence=wave.sequence,
        task_shapes=task_shapes((launches or wave).steps),  # the job's tasks, in its own order
        planned=[
            PlannedStep(
                state=step.state,
                iteration=step.iteration,
                tool_ref=step.tool_ref,
                resources=step.resources,
                resources_profile=step.resources_profile,
                inputs=list(step.inputs),
                outputs=list(step.outputs),
                image=image.image,
                image_digest=image.digest,
            )
            for step, image in zip(wave.steps, launched, strict=True)
        ],
    )


def launch_credentials(names: list[str], fingerprint: str) -> Credentials:
    """The secret names a launch passed (values never), and where they came from."""
    return Credentials(names=names, fingerprint=fingerprint, source="worker_environment" if names else "")
