"""A run's result keeps under Temporal's payload limits however many records it has."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from npaflow.runtime.payload_limits import (
    TEMPORAL_PAYLOAD_WARNING,
    TEMPORAL_SEARCH_ATTRIBUTE_BYTES,
    keywords_within,
    newest_within,
)

pytestmark = pytest.mark.unit


class Record(BaseModel):
    name: str


def test_the_newest_records_that_fit_are_kept_in_order_and_the_rest_counted() -> None:
    records = [Record(name=f"shard-{index:04d}" * 20) for index in range(1000)]
    kept, omitted = newest_within(records, 64 * 1024)
    assert kept == records[-len(kept) :] and omitted == 1000 - len(kept)
    assert 0 < sum(len(r.model_dump_json()) for r in kept) <= 64 * 1024 < TEMPORAL_PAYLOAD_WARNING


def test_records_within_the_budget_are_all_kept() -> None:
    records = [Record(name="a"), Record(name="b")]
    assert newest_within(records, 1024) == (records, 0)


def test_a_wide_batchs_current_states_fit_a_search_attribute_and_say_how_many_more() -> None:
    names = [f"shard-{index:04d}-with-a-rather-long-descriptive-member-name" for index in range(50)]
    shown = keywords_within(names)
    assert len(json.dumps(shown)) < TEMPORAL_SEARCH_ATTRIBUTE_BYTES
    assert shown[:-1] == names[: len(shown) - 1] and shown[-1] == f"+{50 - len(shown) + 1} more"
    assert keywords_within(["a", "b"]) == ["a", "b"]
