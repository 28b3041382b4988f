"""The run id as a type of its own: a string, but never confused with another string by mypy.

Run id = the Temporal workflow id (not Temporal's run id, which we call the
execution id), and the ledger's `run_id`. It is made once, where a run is named
(`submit`, `schedule create`, the workflow's own id), and typed from there on.
"""

from __future__ import annotations

from typing import NewType

RunId = NewType("RunId", str)
