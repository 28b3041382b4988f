"""Typed identities: each id is a string, but never one another (mypy tells them apart).

Run id = the Temporal workflow id (not Temporal's run id, which we call the
execution id). Job ids are the backend's exact ids (`<worker id>-<n>` for local
jobs, built and parsed only in activities/backends/local/jobs.py).
"""

from __future__ import annotations

from typing import NewType

RunId = NewType("RunId", str)
JobId = NewType("JobId", str)
WorkerId = NewType("WorkerId", str)
RequestId = NewType("RequestId", str)
LaunchToken = NewType("LaunchToken", str)
