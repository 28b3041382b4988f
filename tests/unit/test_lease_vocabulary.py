"""A lease's states, moves and verdicts (npaflow/quota/leases.py): closed by their table."""

from __future__ import annotations

import pytest

from npaflow.quota import LeaseAnswer, LeaseRequest, PoolBook, PoolCarry, PoolConfig
from npaflow.quota.leases import LEASE_MOVES, LeaseMove, LeaseState, LeaseVerdict, lease_id, lease_run, moved

pytestmark = pytest.mark.unit


def test_a_lease_id_names_its_run_and_wave_and_gives_the_run_back() -> None:
    lease = lease_id("train-7", "002|sweep|sweep:a:-")
    assert lease == "train-7|002|sweep|sweep:a:-"
    assert lease_run(lease) == "train-7"


def test_only_a_waiting_lease_is_granted_and_an_ended_one_never_moves() -> None:
    assert moved(LeaseState.WAITING, LeaseMove.GRANT) is LeaseState.HELD
    with pytest.raises(ValueError, match="held cannot grant"):
        moved(LeaseState.HELD, LeaseMove.GRANT)
    assert not [move for (state, move) in LEASE_MOVES if state is LeaseState.ENDED]


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (LeaseAnswer(granted=True), LeaseVerdict.GRANTED),
        (LeaseAnswer(granted=False, position=2), LeaseVerdict.WAITING),
        (LeaseAnswer(granted=False, refused="the wave needs 16 GPUs"), LeaseVerdict.REFUSED),
    ],
)
def test_a_pools_answer_is_one_verdict(answer: LeaseAnswer, verdict: LeaseVerdict) -> None:
    assert answer.verdict is verdict


WAVE = "001|serial|:s:-"


def ask(book: PoolBook, run: str, gpus: int) -> LeaseAnswer:
    request = LeaseRequest(lease_id=lease_id(run, WAVE), run_id=run, wave=WAVE, accelerators={"H100": gpus})
    return book.ask(request, now=1.0)


def test_the_book_moves_a_lease_from_waiting_to_held_to_gone() -> None:
    book = PoolBook(PoolCarry(config=PoolConfig(gpus=8)))
    assert ask(book, "first", 8).verdict is LeaseVerdict.GRANTED
    second = ask(book, "second", 8)
    assert (second.verdict, second.position) == (LeaseVerdict.WAITING, 1)
    assert [lease.state for lease in book.leases()] == [LeaseState.HELD, LeaseState.WAITING]
    book.release(lease_id("first", WAVE), now=2.0)
    book.grant(now=2.0)
    assert [lease.state for lease in book.leases()] == [LeaseState.HELD]
    assert ask(book, "huge", 9).verdict is LeaseVerdict.REFUSED


def test_a_flight_seat_is_granted_only_while_waiting_and_a_holder_is_replaced_only_once() -> None:
    from npaflow.cache.flight_seats import Seat, SeatMove, seat_moved

    assert seat_moved(None, SeatMove.ASK_FREE) is Seat.HOLDING
    assert seat_moved(None, SeatMove.ASK_BUSY) is Seat.WAITING
    assert seat_moved(Seat.WAITING, SeatMove.GRANT) is Seat.HOLDING
    assert seat_moved(Seat.HOLDING, SeatMove.REPLACE) is None
    with pytest.raises(ValueError, match="holding cannot grant"):
        seat_moved(Seat.HOLDING, SeatMove.GRANT)
    with pytest.raises(ValueError, match="without a seat cannot replace"):
        seat_moved(None, SeatMove.REPLACE)
