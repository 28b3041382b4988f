"""Reading a spec or catalog file: a regular UTF-8 file, or one clear refusal that names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from npaflow.catalog import load_catalog_from_path
from npaflow.document.text_file import read_document
from npaflow.errors import SpecError
from npaflow.spec import load_spec_from_path
from tests.helpers import CATALOG, fifo_that_answers_late

pytestmark = pytest.mark.unit


def refusal(path: str | Path) -> str:
    with pytest.raises(SpecError) as caught:
        read_document(path)
    (issue,) = caught.value.issues
    return issue.render()


def test_a_device_is_refused_without_being_read() -> None:
    assert refusal("/dev/zero") == (
        "/dev/zero: workflow spec is a device, not a file (hint: name a regular file)"
    )


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    fifo_that_answers_late(fifo)
    assert "workflow spec is a FIFO, not a file" in refusal(fifo)


def test_a_directory_is_refused_as_one(tmp_path: Path) -> None:
    assert "workflow spec is a directory, not a file" in refusal(tmp_path)


def test_text_that_is_not_utf8_is_refused_at_its_line_and_column(tmp_path: Path) -> None:
    spec = tmp_path / "latin1.yaml"
    spec.write_bytes(b"apiVersion: npa.workflow/v0.0.1\nmetadata: {name: caf\xe9}\n")
    assert refusal(spec) == (
        f"{spec}:2:21: workflow spec is not UTF-8 text (byte 0xe9 cannot be decoded) "
        "(hint: save the file as UTF-8)"
    )


def test_a_file_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    with spec.open("wb") as out:
        out.truncate(33 * 2**20)  # sparse: no disk written
    assert "workflow spec is 33.0 MiB; at most 32 MiB is read" in refusal(spec)


def test_a_missing_spec_and_a_missing_catalog_each_say_what_was_not_found(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="workflow spec not found"):
        load_spec_from_path(tmp_path / "nope.yaml", catalog=CATALOG)
    with pytest.raises(SpecError, match="tool catalog is a directory, not a file"):
        load_catalog_from_path(tmp_path)


def test_dash_reads_the_spec_from_standard_input_once_however_often_it_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    from npaflow.cli import run
    from npaflow.document import text_file

    spec = (Path(__file__).parents[2] / "specs/examples/gate-loop.yaml").read_bytes()
    monkeypatch.setattr(text_file, "_stdin", [])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(spec)))
    assert read_document("-") == read_document("-") == spec.decode()
    assert run(["validate-spec", "-"]) == 0
    assert capsys.readouterr().out.strip() == "-: valid (gate-loop, 7 states)"
