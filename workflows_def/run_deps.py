"""What every part of a run's glue shares, and the messages other workflows send it."""

from __future__ import annotations

from dataclasses import dataclass, field

from npaflow.quota import LeaseAnswer
from npaflow.runtime.loaded import LoadedSpec
from npaflow.runtime.request import RunRequest
from npaflow.runtime.run_state import RunState
from workflows_def.cleanup import Cleanup
from workflows_def.run.recorder import RunRecorder


@dataclass
class Mailbox:
    """Answers other workflows signalled to the run, read where the run waits for them."""

    #: Cache keys whose flight this run was granted, and whether another run held it first.
    flight_grants: dict[str, bool] = field(default_factory=dict)
    #: The newest answer of a quota pool to each lease this run asked for (by lease id).
    quota_answers: dict[str, LeaseAnswer] = field(default_factory=dict)


@dataclass
class RunDeps:
    """What every part of the run's glue shares: its input, its spec, its state and its recorder."""

    request: RunRequest
    loaded: LoadedSpec
    state: RunState
    recorder: RunRecorder
    mailbox: Mailbox = field(default_factory=Mailbox)
    #: Cleanup a cancelled wave left until the run's own cleanup has cancelled its jobs by id
    #: (the GPUs it held go back once the jobs are seen to end, not while they still stop).
    after_jobs_cancelled: list[Cleanup] = field(default_factory=list)
