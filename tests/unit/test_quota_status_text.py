"""`npaflow quota status`: a hold whose run already ended says so, and the way out."""

from __future__ import annotations

import pytest

from npaflow.cli.quota.text import pool_lines
from npaflow.ids import RunId
from npaflow.quota import PoolConfig, PoolStatus
from npaflow.quota.leases import lease_id
from npaflow.quota.models import Lease, LeaseRequest

pytestmark = pytest.mark.unit


def held(run_id: str) -> Lease:
    request = LeaseRequest(lease_id=lease_id(run_id, "001"), run_id=RunId(run_id), wave="001")
    return Lease(request=request, gpus=8, asked_at=0.0, order=1, since=100.0)


def test_a_hold_of_an_ended_run_says_how_it_ended_and_how_to_see_what_it_still_runs() -> None:
    status = PoolStatus(pool="gpu8", config=PoolConfig(gpus=16), in_use=16, holders=[held("a"), held("b")])
    lines = pool_lines(status, now=160.0, closed={"b": "terminated"})
    assert lines[1:] == [
        "  holds: a wave 001: 8 GPUs for 60s",
        "  holds: b wave 001: 8 GPUs for 60s",
        "    the run terminated: its GPUs come back once its ledger shows every job ended "
        "(`npaflow quota release gpu8 b` lists what it still runs)",
    ]
