"""A wave waiting for another run's cache flight: the run's state, and what each surface says."""

from __future__ import annotations

from pydantic import TypeAdapter

from npaflow.cli.list_handler import live_row
from npaflow.cli.progress import change_lines, progress_lines
from npaflow.cli.run_row import RunRow
from npaflow.cli.status_text import status_text
from npaflow.ids import RunId
from npaflow.runtime.cache.messages import FlightAnswer
from npaflow.runtime.cache.waits import CacheWait
from npaflow.runtime.progress_view import progress_view
from npaflow.runtime.run_state import RunState
from npaflow.runtime.status_pages import status_view
from npaflow.runtime.summary import StatusReport
from npaflow.runtime.transitions import Effect
from npaflow.runtime.ui_text import current_details
from npaflow.runtime.vocabulary import RunPhase

KEY = "sha256:" + "ab" * 32
WAIT = CacheWait(
    wave="001|serial|:prep:-", states=["prep"], key=KEY, holder="c1", since="2026-12-07T10:00:00Z"
)


def waiting_run() -> RunState:
    state = RunState(RunId("c2"))
    state.phase = RunPhase.RUNNING
    state.cache_flight_waiting(WAIT)
    return state


def test_a_flights_answer_recorded_as_a_bare_bool_still_reads() -> None:
    assert TypeAdapter(FlightAnswer).validate_json("false") == FlightAnswer(holding=False)
    assert FlightAnswer.model_validate({"holding": False, "holder": "c1"}).holder == "c1"


def test_a_wait_names_the_run_holding_the_key_and_a_short_key() -> None:
    assert WAIT.text().startswith(
        "prep waits for run c1, which is making the same cache entry (key abababababab);"
    )
    assert WAIT.model_copy(update={"holder": ""}).short() == "another run's cache entry (prep)"


def test_waiting_refreshes_only_the_ui_details_and_boarding_ends_the_wait() -> None:
    state = waiting_run()
    assert state.take_effect() is Effect.DETAILS and list(state.cache_waits) == [WAIT.wave]
    state.cache_flight_boarded(WAIT.wave)
    assert state.take_effect() is Effect.DETAILS and state.cache_waits == {}
    state.cache_flight_boarded(WAIT.wave)  # a wave that no longer waits changes nothing
    assert state.take_effect() is Effect.NONE


def test_status_the_ui_details_and_the_wait_stream_say_whom_the_run_waits_for() -> None:
    view = status_view(waiting_run())
    said = f"waiting: {WAIT.text()}"
    assert said in status_text(StatusReport.of(view, "RUNNING")).splitlines()
    assert f"  {said}" in progress_lines(view)
    assert [line.split(" ", 1)[1] for line in change_lines(view, view)] == []
    before = view.model_copy(update={"cache_waits": []})
    assert [line.split(" ", 1)[1] for line in change_lines(before, view)] == [said]
    assert "**waiting** prep waits for run c1" in current_details(progress_view(waiting_run()))


def test_list_shows_a_run_waiting_for_a_cache_entry_as_waiting_with_its_live_states() -> None:
    state = waiting_run()
    state.states_entered(["prep"])
    row = live_row(RunRow(run_id="c2", phase="running", execution_status="RUNNING"), status_view(state))
    assert row.shown_phase() == "waiting for run c1's cache entry (prep)" and row.current_states == ["prep"]


def test_the_cache_tally_counts_one_hit_and_one_miss_in_the_singular() -> None:
    from npaflow.runtime.cache.tally import CacheTally

    assert CacheTally(hits=1, misses=1).text() == "1 hit (saved 0.0000 GPU-h), 1 miss"
    assert CacheTally(hits=0, misses=2).text() == "0 hits (saved 0.0000 GPU-h), 2 misses"


def test_status_says_why_the_first_cached_state_missed_and_how_to_read_its_key() -> None:
    from npaflow.runtime.ledger import CachedStep, WaveAttemptRecord
    from npaflow.runtime.request import BackendName
    from npaflow.runtime.summary import RunStatusView, WaveView
    from npaflow.waves import WaveKey

    miss = CachedStep(state="prep", key=KEY, reason="no entry for this key")
    record = WaveAttemptRecord(
        key=WaveKey.parse("001|serial|:prep:-"), states=["prep"], job_id="7", cache=[miss]
    )
    view = RunStatusView(
        run_id="c1",
        workflow="w",
        phase=RunPhase.SUCCEEDED,
        backend=BackendName.LOCAL,
        waves=[WaveView.of(record)],
    )
    assert (
        "cache: 0 hits (saved 0.0000 GPU-h), 1 miss; prep missed: no entry for this key "
        "(why, key by key: npaflow cache explain c1 --state prep)"
    ) in status_text(StatusReport.of(view, "COMPLETED")).splitlines()
