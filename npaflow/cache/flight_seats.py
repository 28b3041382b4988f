"""A run's seat on a cache key's flight (workflows_def/cache/flight_workflow.py), closed by its table.

One run holds the key (it launches the key's step); the others wait in the order
they asked and are granted it one at a time. A seat ends when its run gives the
key back (stored, failed, cancelled, or no longer waiting) or when its run closed
without doing so and the flight replaced it; `FLIGHT_MOVES` is every move the
flight makes, and a move outside it is a bug the flight refuses to make silently.
"""

from __future__ import annotations

from enum import StrEnum


class Seat(StrEnum):
    """Where a run stands on one key's flight."""

    HOLDING = "holding"
    WAITING = "waiting"


class SeatMove(StrEnum):
    """What moves a seat."""

    ASK_FREE = "ask while nobody holds or waits"
    ASK_BUSY = "ask while another run holds or waits"
    GRANT = "grant"
    GIVE_BACK = "give back"
    REPLACE = "replace a closed holder"


#: (seat before, move) -> seat after (None: the run has no seat). Asking again is the same ask.
FLIGHT_MOVES: dict[tuple[Seat | None, SeatMove], Seat | None] = {
    (None, SeatMove.ASK_FREE): Seat.HOLDING,
    (None, SeatMove.ASK_BUSY): Seat.WAITING,
    (Seat.HOLDING, SeatMove.ASK_BUSY): Seat.HOLDING,
    (Seat.WAITING, SeatMove.ASK_BUSY): Seat.WAITING,
    (Seat.WAITING, SeatMove.GRANT): Seat.HOLDING,
    (Seat.HOLDING, SeatMove.GIVE_BACK): None,
    (Seat.WAITING, SeatMove.GIVE_BACK): None,
    (None, SeatMove.GIVE_BACK): None,  # a late or repeated give-back
    (Seat.HOLDING, SeatMove.REPLACE): None,
}


def seat_moved(seat: Seat | None, move: SeatMove) -> Seat | None:
    """The seat a move leads to.

    Raises:
        ValueError: the move is not one of `FLIGHT_MOVES`.
    """
    if (seat, move) not in FLIGHT_MOVES:
        raise ValueError(f"a run {seat.value if seat else 'without a seat'} cannot {move.value}")
    return FLIGHT_MOVES[(seat, move)]
