"""Fan-out from data in the workflow layer: reading a group's list and keeping its members' standing.

- `reads.py`: `FanOutReads`, the executor's fan-out half: `read_items` (once per
  occurrence, a local activity; the ledger records its digest) and
  `record_members` (`members.json` and the ledger's record).
- `layer.py`: `FanOutMembers`, the wave layer that names which members of a
  failed batch did not succeed (the walk then applies `minSuccess`).
- `member_attempts.py`: which members each attempt of a batch ran to success;
  a retry launches only the others and records them as `carried`.
- `member_outputs.py`: a failed batch's declared outputs checked once, so a
  member whose task succeeded counts as succeeded only with its outputs.
- `diff_workflow.py`: `NpaflowItemsDiff`, the helper `resume --reread-items`
  runs first to show what reading each list again would change.

The layer and reads are built only for a spec with a `forEach:` group, and the
attempts call in only for a fan-out batch: a plain run never enters here.
"""
