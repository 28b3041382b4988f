"""The run: `NpaWorkflowRun` and what it composes to carry out one spec durably.

- `workflow.py`: the workflow type, its signals, queries and endings.
- `spec_load.py`: the load (a local activity, and a wide spec's parts).
- `executor.py`: `run_wave`: replay or adopt, the run's wave layers, the attempts.
- `attempts.py`: one attempt: launch, await, settle, with the two retry budgets.
- `recorder.py`: each state change's effect, and the ledger deltas it exports.
- `gates.py`, `budget.py`: what holds a run back (approvals, continue-as-new) and
  its GPU-hour budget per attempt.
- `outputs.py`, `readings.py`: a wave's declared outputs verified; decisions and
  triggers read.
- `cancellation.py`, `notify.py`: cancelling by exact job id; run notifications.
"""
