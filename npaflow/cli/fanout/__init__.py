"""Fan-out from the command line: what `resume --reread-items` would change, before it restarts.

- `reread.py`: each forEach list the run read (its ledger copy) against its
  source now, read by a worker (the `NpaflowItemsDiff` helper), as lines.

The spec's part is npaflow/fanout/; `plan-spec --assume-items` is in npaflow/cli/plan_waves.py.
"""

from npaflow.cli.fanout.reread import changes_text, list_changes, refusal

__all__ = ["changes_text", "list_changes", "refusal"]
