"""The SkyPilot backend: managed jobs through the `sky` CLI (SkyPilot 0.12, skypilot ref §1–§3).

Every call after launch names jobs by exact id; the job id is resolved from the
unique job name in `sky jobs queue`, never trusted from launch output alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

import structlog

from activities.backends.base import BackendUnavailableError, LaunchRejectedError, LaunchRequest
from npaflow.runtime.ledger import TaskRow

log = structlog.get_logger(__name__)

#: Launch-time exceptions that no retry can fix (skypilot ref §4 classification).
CONFIGURATION_ERRORS = ("InvalidSkyPilotConfigError", "InvalidClusterNameError", "ValueError",
                        "NotSupportedError", "ResourcesMismatchError", "Error: ")
_JOB_ID = re.compile(r"^Managed Job ID: (\d+)\s*$", re.MULTILINE)
_CONTROLLER_DOWN = ("ClusterNotUpError", "No in-progress managed jobs",
                    "All managed jobs should have finished")


def _iso(epoch: object) -> str:
    if not isinstance(epoch, int | float) or epoch <= 0:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(epoch)))


def _last_line(*streams: str) -> str:
    """The last line of the first non-empty stream: where the CLI puts its one-line error."""
    for stream in streams:
        lines = stream.strip().splitlines()
        if lines:
            return lines[-1]
    return "no output"


def parse_queue_json(stdout: str) -> list[dict]:
    """Parse `sky jobs queue -o json`, skipping server log lines printed before the array."""
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith("["):
            return json.loads("\n".join(lines[index:]))
    raise BackendUnavailableError(f"sky jobs queue printed no JSON: {stdout[:200]!r}")


def task_row(record: dict) -> TaskRow:
    """One queue record as a ledger timeline row."""
    return TaskRow(
        job_id=str(record.get("job_id", "")), task_id=int(record.get("task_id") or 0),
        task_name=str(record.get("task_name") or ""), status=str(record.get("status") or ""),
        submitted_at=_iso(record.get("submitted_at")), start_at=_iso(record.get("start_at")),
        end_at=_iso(record.get("end_at")), is_job_group=bool(record.get("is_job_group")),
        execution=str(record.get("execution") or ""),
        cluster_name=str(record.get("current_cluster_name") or ""),
        retry_count=int(record.get("recovery_count") or 0),
        failure_reason=str(record.get("failure_reason") or ""))


class SkyPilotBackend:
    """Launches, queries and cancels SkyPilot managed jobs with the `sky` CLI."""

    def __init__(self, sky_bin: str, home: Path, launch_timeout: float = 1800,
                 query_timeout: float = 120) -> None:
        self.sky_bin = sky_bin
        self.launch_dir = home / "skypilot" / "launch"
        self.launch_timeout = launch_timeout
        self.query_timeout = query_timeout

    async def _sky(self, *args: str, timeout: float,
                   env: dict[str, str] | None = None) -> tuple[int, str, str]:
        try:
            process = await asyncio.create_subprocess_exec(
                self.sky_bin, *args, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "SKYPILOT_DISABLE_USAGE_COLLECTION": "1", **(env or {})})
        except FileNotFoundError:
            raise LaunchRejectedError(f"the sky CLI '{self.sky_bin}' was not found; set "
                                      "NPA_SKYPILOT_BIN", retryable=False) from None
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise BackendUnavailableError(f"sky {args[0]} {args[1]} timed out after {timeout:g}s") from None
        return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")

    async def launch(self, request: LaunchRequest) -> str:
        """`sky jobs launch --name N --detach-run --yes [--infra] [--secret NAME]... FILE`."""
        self.launch_dir.mkdir(parents=True, exist_ok=True)
        path = self.launch_dir / f"{request.job_name}.yaml"
        path.write_text(request.yaml, encoding="utf-8")
        path.chmod(0o600)
        args = ["jobs", "launch", "--name", request.job_name, "--detach-run", "--yes"]
        if request.infra:
            args += ["--infra", request.infra]
        for name in request.secret_names:
            if name in request.secret_values:
                args += ["--secret", name]
        code, out, err = await self._sky(*args, str(path), timeout=self.launch_timeout,
                                         env=request.secret_values)
        if code != 0:
            message = _last_line(err, out)
            retryable = not any(marker in message for marker in CONFIGURATION_ERRORS)
            raise LaunchRejectedError(f"sky jobs launch failed (exit {code}): {message}",
                                      retryable=retryable)
        match = _JOB_ID.search(out)
        log.info("skypilot.launched", job_name=request.job_name, job_id=match.group(1) if match else "")
        return match.group(1) if match else ""

    async def _records(self) -> list[dict]:
        code, out, err = await self._sky("jobs", "queue", "--all", "-v", "-o", "json",
                                         timeout=self.query_timeout)
        if code != 0:
            if any(marker in err + out for marker in _CONTROLLER_DOWN):
                return []  # no controller means no managed jobs: a verified empty queue
            raise BackendUnavailableError(f"sky jobs queue failed (exit {code}): {_last_line(err)}")
        return parse_queue_json(out)

    async def find_jobs(self, job_name: str) -> list[str]:
        """Ids of managed jobs named exactly `job_name`, newest first."""
        ids = {str(r["job_id"]) for r in await self._records() if r.get("job_name") == job_name}
        return sorted(ids, key=int, reverse=True)

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """Task rows of each job id from one queue call (no rows for an id the queue lacks)."""
        records = await self._records()
        result: dict[str, list[TaskRow]] = {job_id: [] for job_id in job_ids}
        for record in records:
            job_id = str(record.get("job_id"))
            if job_id in result:
                result[job_id].append(task_row(record))
        for rows in result.values():
            rows.sort(key=lambda row: row.task_id)
        return result

    async def cancel(self, job_id: str) -> None:
        """`sky jobs cancel --yes ID` (idempotent; a stopped controller means nothing runs)."""
        code, out, err = await self._sky("jobs", "cancel", "--yes", job_id, timeout=self.query_timeout)
        if code != 0 and not any(marker in err + out for marker in _CONTROLLER_DOWN):
            raise BackendUnavailableError(f"sky jobs cancel {job_id} failed (exit {code}): "
                                          f"{_last_line(err)}")

    async def logs(self, job_id: str, task: str = "") -> str:
        """`sky jobs logs ID --no-follow`."""
        _, out, err = await self._sky("jobs", "logs", job_id, "--no-follow", timeout=self.query_timeout)
        return out or err
