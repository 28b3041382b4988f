"""The dev server's flags that every one npaflow starts carries (`npaflow dev`, tests, benches).

A dev server has one history shard, and each of its task queues (transfer: a scheduled
workflow or activity task on its way to matching; timers; visibility) is read at most 20
times a second by default. On one shard that cap is every run's: once the first burst is
spent, each workflow and activity task waits ~40 ms to be dispatched, so a run of small
waves took ~95 ms per activity round trip instead of ~20 (measured with a plain SDK loop,
`bench/README.md`). A production cluster spreads its runs over many shards and is left as
its operators set it.
"""

from __future__ import annotations

#: Reads per second of each of the one shard's task queues (Temporal's default is 20).
SHARD_QUEUE_READS_PER_SECOND = 1000

DEV_SERVER_FLAGS: tuple[str, ...] = tuple(
    flag
    for queue in ("transfer", "timer", "visibility")
    for flag in (
        "--dynamic-config-value",
        f"history.{queue}ProcessorMaxPollRPS={SHARD_QUEUE_READS_PER_SECOND}",
    )
)
