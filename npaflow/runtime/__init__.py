"""The run's model: what a run is, what crosses between workflow and activities, what the ledger keeps.

Pure code (no Temporal, no I/O): the workflow layer (`workflows_def/`) drives it,
the activities (`activities/`) fill in what only side effects can learn. Where to
start reading:

- `contract.py` (with `environment.py`): every name two layers share, once:
  activities and their queues, signals, queries, search attributes, error types,
  ledger file names, environment variables.
- `request.py`: the workflow input, `RunRequest`.
- `run_state.py`: a run's phase, wave attempts, decisions and what its ledger
  lacks, changed only through the transitions of `transitions.py`, whose
  vocabularies are `vocabulary.py` (run phases, wave and ledger statuses) and
  `status.py` (job statuses and failure classes).
- `messages.py`: each activity's input and result model.
- `ledger.py`, `ledger_book.py`, `ledger_document.py`, `projection.py`: the
  `npa.workflow.runtime.v1` ledger, the delta a run has not yet exported, the
  in-memory document that merges deltas, and the manifest/status/stage views.
- `summary.py`, `ui_text.py`, `progress.py`, `usage.py`: what a run reports
  (status query, final summary, UI text, running totals, GPU- and node-hours).
- `metrics.py`, `notifications.py`: the metric catalog and run notifications.
- `ids.py`, `locations.py`, `timestamps.py`, `json_text.py`, `diagrams.py`:
  typed ids, where a ledger lives, the timestamp format, JSON rendered in
  pieces, the generated state diagrams.
"""
