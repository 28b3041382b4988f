"""The text of `npaflow quota status`: capacity, use by team, holders, waiters in the order served."""

from __future__ import annotations

import time
from collections.abc import Mapping

from npaflow.cli.quota.closed_holders import closed_note
from npaflow.quota import PoolStatus
from npaflow.runtime.usage import gpu_hours_text


def pool_lines(status: PoolStatus, now: float | None = None, closed: Mapping[str, str] = {}) -> list[str]:
    """One block per pool; `closed` maps a holding run that has ended to how it ended."""
    now = time.time() if now is None else now
    config = status.config
    kind = f" {config.accelerator}" if config.accelerator else ""
    lines = [f"quota pool {status.pool}: {status.in_use} of {config.gpus}{kind} GPUs in use"]
    for team in status.teams:
        lines.append(
            f"  team {team.team} (weight {team.weight:g}): {team.in_use} GPUs in use, {team.waiting} GPUs "
            f"waiting ({_runs(status, team.team)}), "
            f"{gpu_hours_text(team.gpu_hours)} GPU-h (decayed)"
        )
    for lease in status.holders:
        held = _elapsed(max(0.0, now - lease.since))
        run_id = lease.request.run_id
        lines.append(f"  holds: {run_id} wave {lease.request.wave}: {lease.gpus} GPUs for {held}")
        if run_id in closed:
            lines.append(f"    {closed_note(status.pool, run_id, closed[run_id])}")
    for position, lease in enumerate(status.waiting, start=1):
        asked = _elapsed(max(0.0, now - lease.asked_at))
        lines.append(
            f"  waits {position}: {lease.request.run_id} wave {lease.request.wave}: {lease.gpus} GPUs, "
            f"team {lease.request.team}, priority {lease.request.priority}, for {asked}"
        )
    return lines


def _elapsed(seconds: float) -> str:
    """`42s`, `7m`, `3h12m`: how long a lease has been held or waited."""
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


def _runs(status: PoolStatus, team: str) -> str:
    """How many runs of the team wait, in words (`1 run`, `3 runs`)."""
    runs = len({lease.request.run_id for lease in status.waiting if lease.request.team == team})
    return f"{runs} run{'' if runs == 1 else 's'}"
