"""A quota pool's bookkeeping: who is served next, and what a pool refuses (issue 31)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from npaflow.quota import LeaseRequest, PoolBook, PoolCarry, PoolConfig, QuotaClaim

pytestmark = pytest.mark.unit


def ask(
    book: PoolBook, run: str, gpus: int = 8, *, team: str = "t", priority: int = 3, at: float = 0.0
) -> bool:
    request = LeaseRequest(
        lease_id=f"{run}|w", run_id=run, wave="w", team=team, priority=priority, accelerators={"H100": gpus}
    )
    return book.ask(request, at).granted


def pool(gpus: int = 8, **weights: float) -> PoolBook:
    return PoolBook(PoolCarry(config=PoolConfig(gpus=gpus, weights=weights)))


def test_a_wave_is_granted_while_it_fits_and_waits_once_the_pool_is_full() -> None:
    book = pool(16)
    assert [ask(book, r) for r in ("a", "b", "c")] == [True, True, False]
    assert book.in_use == 16 and [lease.request.run_id for lease in book.queue()] == ["c"]


def test_asking_again_is_the_same_ask() -> None:
    book = pool(8)
    ask(book, "a")
    ask(book, "b")
    ask(book, "b")
    assert len(book.waiting) == 1 and book.answer("b|w").position == 1


def test_priority_beats_arrival_and_the_head_of_the_line_is_not_overtaken() -> None:
    book = pool(8)
    ask(book, "holder")
    ask(book, "early", 8, priority=3)
    ask(book, "small", 2, priority=3)
    ask(book, "urgent", 8, priority=1)
    assert [lease.request.run_id for lease in book.queue()] == ["urgent", "early", "small"]
    book.release("holder|w", 10)
    granted = [lease.request.run_id for lease in book.grant(10)]
    assert granted == ["urgent"]  # "small" would fit beside nothing else: it does not jump the line


def test_the_team_with_fewer_gpu_hours_per_weight_is_served_first() -> None:
    book = pool(8, heavy=3)
    ask(book, "h1", team="heavy", at=0)
    book.release("h1|w", 3600)  # heavy ran 8 GPUs for an hour: 8 GPU-h, weight 3
    ask(book, "x", team="light", at=3600)
    book.release("x|w", 3600 + 1800)  # light: 4 GPU-h, weight 1
    ask(book, "blocker", team="other", at=5400)
    ask(book, "h2", team="heavy", at=5400)
    ask(book, "l2", team="light", at=5400)
    assert [lease.request.team for lease in book.queue()] == ["heavy", "light"]  # 8/3 < 4/1


def test_a_wave_bigger_than_the_pool_is_refused_with_the_arithmetic() -> None:
    request = LeaseRequest(lease_id="r|w", run_id="r", wave="w", accelerators={"H100": 24})
    answer = pool(16).ask(request, 0)
    assert not answer.granted and answer.refused == "the wave needs 24 GPUs and the pool holds 16"


def test_a_pool_of_one_accelerator_type_does_not_count_another() -> None:
    book = PoolBook(PoolCarry(config=PoolConfig(gpus=8, accelerator="H100")))
    request = LeaseRequest(lease_id="r|w", run_id="r", wave="w", accelerators={"A100": 8})
    assert book.ask(request, 0).granted and book.in_use == 0


def test_the_leases_of_runs_that_are_gone_are_reclaimed_and_the_next_wave_granted() -> None:
    book = pool(8)
    ask(book, "gone")
    ask(book, "next")
    book.drop_runs({"gone"}, 5)
    assert [lease.request.run_id for lease in book.grant(5)] == ["next"]


def test_a_pool_carried_across_continue_as_new_keeps_its_leases_and_its_ledger() -> None:
    book = pool(8)
    ask(book, "a", team="x")
    ask(book, "b", team="y")
    book.charge(100)
    again = PoolBook(book.carry())
    assert again.status("p").model_dump() == book.status("p").model_dump()


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"pool": "Bad Pool"}, "quota pool 'Bad Pool'"),
        ({"team": "A"}, "team 'A'"),
        ({"priority": 9}, "less than"),
    ],
)
def test_a_claim_with_a_bad_pool_team_or_priority_is_refused(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        QuotaClaim.model_validate(fields)


def request(run: str, gpus: int = 8, team: str = "t") -> LeaseRequest:
    return LeaseRequest(lease_id=f"{run}|w", run_id=run, wave="w", team=team, accelerators={"H100": gpus})


def test_a_settle_reports_every_grant_it_makes_even_one_made_while_an_ask_came_in() -> None:
    book = pool(16)
    for run in ("a", "b", "waiter"):
        ask(book, run)
    granted, asked = book.settle(["a|w"], [request("late")], 10)
    # The freed GPUs go to the head of the line, and its wave is told: a grant made
    # while registering "late" and never reported would hold 8 GPUs that no job uses.
    assert [lease.request.run_id for lease in granted] == ["waiter"]
    assert [(a.lease_id, a.granted, a.position) for a in asked] == [("late|w", False, 1)]
    assert set(book.holders) == {"b|w", "waiter|w"}


def test_a_settle_answers_an_asker_granted_in_it_with_its_grant() -> None:
    book = pool(16)
    ask(book, "a")
    granted, asked = book.settle([], [request("b"), request("c")], 5)
    assert [lease.request.run_id for lease in granted] == ["b"]
    assert [(a.lease_id, a.granted) for a in asked] == [("b|w", True), ("c|w", False)]


def test_a_settle_refuses_an_ask_the_pool_could_never_hold_without_queueing_it() -> None:
    book = pool(8)
    granted, asked = book.settle([], [request("big", 16)], 0)
    assert not granted and "needs 16 GPUs and the pool holds 8" in asked[0].refused and not book.waiting


def test_a_lease_given_back_with_its_spend_charges_the_team_what_its_attempts_spent() -> None:
    book = pool(8)
    book.ask(request("r1", gpus=8, team="a"), 1000.0)
    book.release("r1|w", 1600.0, spent_hours=8 * 60 / 3600)  # held 10 min; its job ran 1 min on 8 GPUs
    assert book.used["a"] == pytest.approx(8 * 60)  # the job's minute, not the hold


def test_a_lease_given_back_without_its_spend_charges_the_time_it_was_held() -> None:
    book = pool(8)
    book.ask(request("r1", gpus=8, team="a"), 1000.0)
    book.release("r1|w", 1600.0)
    assert book.used["a"] == pytest.approx(8 * 600 * 0.5**0)


def test_a_spend_release_leaves_the_charges_of_the_teams_other_leases_alone() -> None:
    book = pool(16)
    book.ask(request("r1", gpus=8, team="a"), 1000.0)
    book.ask(request("r2", gpus=8, team="a"), 1000.0)
    book.release("r1|w", 4600.0, spent_hours=0.0)  # its job never started
    assert book.used["a"] == pytest.approx(8 * 3600)
    assert book.holders["r2|w"].charged == pytest.approx(book.used["a"])
