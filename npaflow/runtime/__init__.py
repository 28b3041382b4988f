"""The run's model: what a run is, what crosses between workflow and activities, what the ledger keeps.

Pure code (no Temporal, no I/O): the workflow layer (`workflows_def/`) drives it,
the activities (`activities/`) fill in what only side effects can learn. Where to
start reading:

- `contract.py` (with `environment.py`): every name two layers share, once:
  activities and their queues, signals, queries, search attributes, the failure
  class of each error type,
  ledger file names, environment variables.
- `request.py`: the workflow input, `RunRequest`; `run_memo.py`: its memo.
- `run_state.py` (with `wave_attempts.py` and the fields a move may set,
  `attempt_changes.py`): a run's phase, wave attempts,
  decisions and what its ledger lacks, changed only through the rows of
  `transitions.py`, whose
  vocabularies are `vocabulary.py` (run phases, wave and ledger statuses) and
  `status.py` (job statuses and failure classes).
- `messages.py`: each activity's input and result model; `loaded.py`: the load's
  (the loaded spec and what earlier executions left).
- `ledger/`: the `npa.workflow.runtime.v1` ledger, the delta a run has not yet
  exported, the in-memory document that merges deltas, and the
  manifest/status/stage views (its front door lists the edits a new field needs).
- `summary.py`, `result.py`, `ui_text.py`, `progress.py`, `usage.py`: what a run
  reports (status query, the bounded final summary, UI text, running totals,
  GPU- and node-hours); `quota_waits.py`: each wave's wait for quota GPUs;
  `stalls.py`: the run's open calls that keep failing (what `status` says of them);
  `observations.py`: the bounded changes an await keeps of its job.
- `state_rows.py`, `progress_view.py`: the newest states as table rows and the
  Temporal UI's current details of a run.
- `payload_limits.py`: the sizes every Temporal payload keeps under, with
  Temporal's own limits beside them; `status_pages.py`: the status query's
  bounded pages; `spec_parts.py`: a wide spec's load, packed and read in parts.
- `reads.py`: what the helper workflows read for the CLI (job logs, a run's
  waves, its artifacts).
- `reconcile/`: the orphan and ledger sweeps' pure part (job owners, orphans,
  how a run that closed without its code ended).
- `cache/`: the stage cache as a run sees it: its messages (lookup, store,
  flights), a wave waiting for another run's flight, `npaflow cache`'s admin
  messages, its tally (hits, misses, savings);
  `gpu_demand.py`: the GPUs a wave asks of a quota pool.
- `metrics.py`, `notifications.py`: the metric catalog and run notifications;
  `signal_input.py`: what an operator's hand-typed `cancel` signal said.
- `ledger_layout.py`: the ledger's file names under a run prefix.
- `locations.py`, `timestamps.py`, `json_text.py`, `diagrams.py`:
  where a ledger lives, the timestamp format, JSON rendered in
  pieces, the generated state diagrams.
"""
