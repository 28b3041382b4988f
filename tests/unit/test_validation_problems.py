"""A refused document is one line: where, what is wrong, what came instead; never pydantic's links."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from npaflow.document.problems import validation_problems
from npaflow.runtime.request import RunRequest


def problems_of(document: object, limit: int = 3) -> str:
    with pytest.raises(ValidationError) as error:
        RunRequest.model_validate(document)
    return validation_problems(error.value, limit)


def test_a_misspelled_field_is_named_as_one_it_does_not_take() -> None:
    assert (
        problems_of({"spec": "x", "poll_second": 1})
        == "poll_second: not a field it takes (check the spelling)"
    )


def test_a_wrong_type_says_what_came_instead() -> None:
    assert problems_of({"vars": {"a": 1}}) == "vars.a: Input should be a valid string, got int"


def test_a_document_that_is_not_a_mapping_is_named_as_the_document() -> None:
    assert problems_of([1, 2]).startswith("the document: Input should be a valid dictionary")


def test_problems_past_the_limit_are_counted_not_listed() -> None:
    text = problems_of({"retries": -1, "max_concurrency": -1, "poll_seconds": 0, "cache": "x"}, limit=2)
    assert text.count(";") == 2 and text.endswith("; and 2 more")
    assert "\n" not in text and "pydantic.dev" not in text
