"""What a followed run waits for besides its jobs: another run's cache entry, a call that keeps failing.

`submit --wait` and `status --watch` say each once, when it begins (and the redrawn
view lists them while they last); `npaflow status` lists them too.
"""

from __future__ import annotations

import time

from npaflow.runtime.summary import RunFacts


def waiting_lines(view: RunFacts) -> list[str]:
    """Each wait of the view, as a sentence."""
    return [wait.text() for wait in view.cache_waits] + [stall.text for stall in view.stalled]


def new_waits(before: RunFacts | None, after: RunFacts) -> list[tuple[str, str]]:
    """(when, sentence) of each wait `after` has that `before` did not."""
    waited = {wait.wave for wait in before.cache_waits} if before else set()
    found = [(wait.since, wait.text()) for wait in after.cache_waits if wait.wave not in waited]
    stalled = {stall.call for stall in before.stalled} if before else set()  # said once, not each second
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return found + [(now, stall.text) for stall in after.stalled if stall.call not in stalled]
