"""A lease's vocabulary: its id, its states and the moves between them, and the pool's verdict.

A lease is one wave's claim on a pool's GPUs. It waits, is held, and ends (released
by its run, reclaimed from a closed run, or given up); `LEASE_MOVES` is every move
the pool's book may make, and `PoolBook` makes no other. The id is the run's id
and the wave's key, so a retried or re-sent ask is the same ask and the pool can
tell which run to answer even for a lease it no longer holds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NewType

from npaflow.ids import RunId

#: `<run id>|<wave key>`: run ids never hold `|` (npaflow/runtime/request.py RUN_ID_PATTERN).
LeaseId = NewType("LeaseId", str)
_SEPARATOR = "|"


def lease_id(run_id: str, wave_key: str) -> LeaseId:
    """One lease per wave of a run: a retried or re-sent ask is the same ask."""
    return LeaseId(f"{run_id}{_SEPARATOR}{wave_key}")


def lease_run(lease: str) -> RunId:
    """The run a lease id names."""
    return RunId(lease.split(_SEPARATOR, 1)[0])


class LeaseState(StrEnum):
    """Where a lease stands in its pool."""

    WAITING = "waiting"  # in line: asked, not granted
    HELD = "held"  # granted: its GPUs count as in use
    ENDED = "ended"  # released, reclaimed or given up: no longer in the book


class LeaseMove(StrEnum):
    """What moves a lease."""

    ASK = "ask"
    GRANT = "grant"
    RELEASE = "release"  # the run gave it back (or left the line)
    RECLAIM = "reclaim"  # its run closed: the pool took it back


#: Every move the pool's book makes: (from, move) -> to. An ask of a lease already in the
#: book is the same ask (no move); a grant only ever takes the head of the line.
LEASE_MOVES: dict[tuple[LeaseState | None, LeaseMove], LeaseState] = {
    (None, LeaseMove.ASK): LeaseState.WAITING,
    (LeaseState.WAITING, LeaseMove.GRANT): LeaseState.HELD,
    (LeaseState.WAITING, LeaseMove.RELEASE): LeaseState.ENDED,
    (LeaseState.HELD, LeaseMove.RELEASE): LeaseState.ENDED,
    (LeaseState.WAITING, LeaseMove.RECLAIM): LeaseState.ENDED,
    (LeaseState.HELD, LeaseMove.RECLAIM): LeaseState.ENDED,
}


def moved(state: LeaseState | None, move: LeaseMove) -> LeaseState:
    """The state a move leads to.

    Raises:
        ValueError: the move is not one of `LEASE_MOVES` (a bug in the book, never a user's).
    """
    to = LEASE_MOVES.get((state, move))
    if to is None:
        raise ValueError(f"a lease {state.value if state else 'not in the book'} cannot {move.value}")
    return to


class LeaseVerdict(StrEnum):
    """The pool's answer to an ask, in one word."""

    GRANTED = "granted"
    WAITING = "waiting"
    REFUSED = "refused"  # it can never fit, or the pool is being deleted
