"""Build b2 for the rollout test: npaflow with one replay-incompatible change.

Every wave starts with a 10 ms timer, so b2 issues a command b1 never did: b1
histories cannot replay on b2 (a nondeterminism error), while runs that start
on b2 run normally. `python -m tests.integration.b2_code` serves a worker;
with arguments it is the `npaflow` CLI of this build.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

from temporalio import workflow

from workflows_def.run.executor import TemporalExecutor

_run_wave = TemporalExecutor.run_wave


async def _run_wave_after_a_timer(self: TemporalExecutor, wave):  # type: ignore[no-untyped-def]
    await workflow.sleep(timedelta(milliseconds=10))
    return await _run_wave(self, wave)


TemporalExecutor.run_wave = _run_wave_after_a_timer  # type: ignore[method-assign]

if __name__ == "__main__":
    if len(sys.argv) > 1:
        from npaflow.cli import main as cli_main

        cli_main(sys.argv[1:])
    else:
        from worker.main import main

        main()
        sys.stdout.flush()
        os._exit(0)
