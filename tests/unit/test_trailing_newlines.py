"""A name that ends in a newline is not the name: every identifier check matches to the very end.

Python's `$` also matches before a final newline, so `re.match("^...$", "gpus\\n")`
passes; a pool, digest, tool ref or variable name carried through a raw
`temporal workflow start` or a script's `$(cat ...)` must be refused instead.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import ValidationError

from npaflow.images import ImageBinding
from npaflow.images.reference import ImageReferenceError, parse_image
from npaflow.ledger_paths import root_problem
from npaflow.quota import name_problem
from npaflow.runtime.request import RunRequest

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "a" * 64


def _refused(check: Callable[[], object]) -> bool:
    try:
        result = check()
    except (ValidationError, ImageReferenceError, ValueError):
        return True
    return bool(result) if isinstance(result, str) else False


@pytest.mark.parametrize(
    ("what", "check"),
    [
        ("quota pool", lambda: name_problem("pool", "gpus\n")),
        ("run id", lambda: RunRequest(spec="x", run_id="nightly\n")),
        ("secret variable", lambda: RunRequest(spec="x", secret_env=["HF_TOKEN\n"])),
        ("image digest", lambda: parse_image(f"ghcr.io/team/train@{DIGEST}\n")),
        ("pinned digest", lambda: ImageBinding(pins={"ghcr.io/team/train:v1": DIGEST + "\n"})),
        ("override key", lambda: ImageBinding(overrides={"train\n": "ghcr.io/team/train:v1"})),
        ("ledger bucket", lambda: root_problem("s3://my-bucket\n/runs")),
    ],
)
def test_a_trailing_newline_makes_the_name_invalid(what: str, check: Callable[[], object]) -> None:
    assert _refused(check), f"{what} with a trailing newline was accepted"


@pytest.mark.parametrize(
    ("what", "check"),
    [
        ("quota pool", lambda: name_problem("pool", "gpus")),
        ("run id", lambda: RunRequest(spec="x", run_id="nightly")),
        ("pinned digest", lambda: ImageBinding(pins={"ghcr.io/team/train:v1": DIGEST})),
    ],
)
def test_the_same_names_without_it_are_valid(what: str, check: Callable[[], object]) -> None:
    assert not _refused(check), f"{what} was refused"
