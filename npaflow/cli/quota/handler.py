"""`npaflow quota ...`: pools live in Temporal (one `NpaflowQuotaPool` workflow each), asked directly."""

from __future__ import annotations

import json
import sys

from pydantic import ValidationError

from npaflow.cli.quota.closed_holders import closed_holders
from npaflow.cli.quota.text import pool_lines
from npaflow.document.problems import message_of
from npaflow.errors import UsageError
from npaflow.options.features import QuotaOptions
from npaflow.quota import PoolConfig, PoolStatus, accelerator_problem, name_problem
from npaflow.temporal.client import connect_to, task_queue_from
from npaflow.temporal.pools import (
    delete_pool,
    every_pool_status,
    pool_status,
    set_pool,
)


async def quota(options: QuotaOptions) -> int:
    """Set, list, show or delete pools (exit 2 on a bad value or a pool that does not exist)."""
    config = (
        _config(options) if options.action == "set" else None
    )  # a mistake is named before any server is asked
    client = await connect_to(options)
    if config is not None:
        statuses = [await set_pool(client, options.pool, config, task_queue_from(options.task_queue))]
    elif options.action == "delete":
        await delete_pool(client, options.pool)
        print(
            json.dumps({"deleted": options.pool}) if options.as_json else f"deleted quota pool {options.pool}"
        )
        return 0
    elif options.action == "status" and options.pool:
        statuses = [await pool_status(client, options.pool)]
    else:
        found, unanswered = await every_pool_status(client)
        for problem in unanswered.values():
            print(f"npaflow: warning: {problem}", file=sys.stderr)
        statuses = list(found.values())
    closed = await closed_holders(client, statuses) if options.action == "status" else {}
    if options.as_json:
        print(json.dumps([_document(s, closed) for s in statuses], indent=2))
    elif options.action == "list":
        print(
            "\n".join(_summary(s) for s in statuses)
            or "no quota pools (create one: npaflow quota set POOL --gpus N)"
        )
    else:
        print("\n\n".join("\n".join(pool_lines(s, closed=closed)) for s in statuses) or "no quota pools")
    return 0


def _document(status: PoolStatus, closed: dict[str, str]) -> dict[str, object]:
    """A pool's JSON: its status, and (with `status`) each holding run that already ended."""
    ended = {lease.request.run_id for lease in status.holders} & closed.keys()
    document: dict[str, object] = status.model_dump(mode="json")
    if ended:
        document["closed_holders"] = {run_id: closed[run_id] for run_id in sorted(ended)}
    return document


def _summary(status: PoolStatus) -> str:
    kind = f" {status.config.accelerator}" if status.config.accelerator else ""
    waiting = sum(lease.gpus for lease in status.waiting)
    runs = len({lease.request.run_id for lease in status.waiting})
    return (
        f"{status.pool}: {status.in_use} of {status.config.gpus}{kind} GPUs in use, {waiting} GPUs waiting "
        f"({runs} run{'' if runs == 1 else 's'})"
    )


def _config(options: QuotaOptions) -> PoolConfig:
    if problem := name_problem("quota pool", options.pool):
        raise UsageError(problem)
    weights: dict[str, float] = {}
    for item in options.team:
        team, sep, weight = item.partition("=")
        if team.strip() in weights:  # the last would win without a word
            raise UsageError(f"--team {team.strip()} is given twice: give each team once, with its weight")
        try:
            weights[team.strip()] = float(weight) if sep else 1.0
        except ValueError:
            raise UsageError(f"--team {item!r}: write NAME=WEIGHT, e.g. research=2") from None
    if problem := accelerator_problem(options.accelerator):
        raise UsageError(f"--accelerator: {problem}")
    try:
        return PoolConfig(gpus=options.gpus, accelerator=options.accelerator, weights=weights)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = str(error["loc"][0]) if error["loc"] else "team"
        flag = {"gpus": "--gpus", "accelerator": "--accelerator"}.get(field, "--team")
        raise UsageError(f"{flag}: {message_of(error)}") from None
