"""The stage cache as a run sees it: what crosses to its activities, and what it served.

Front door of the run-side cache (the key and the entry are pure, in
`npaflow/cache/`). Inside:

- `messages.py`: the workflow's lookup, store and flight messages to the cache
  activities (DESIGN 20, docs/cache.md).
- `admin.py`: `npaflow cache list | explain | purge`, asked of a worker.
- `waits.py`: a wave waiting for another run's flight, as every surface says it.
- `tally.py`: hits, misses and the GPU-hours hits did not spend, as a running total.
"""
