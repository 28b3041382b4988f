"""A ledger stays under its root whatever the spec, the --var values or the run id say."""

from __future__ import annotations

import pytest

from npaflow.catalog import ToolCatalog
from npaflow.errors import ConfigurationError
from npaflow.runtime.locations import run_prefix_for
from npaflow.spec import WorkflowSpec, load_spec_from_str
from tests.helpers import messages_of, minimal_doc

pytestmark = pytest.mark.unit

ESCAPES = ["../../etc", "/abs/path", "a/../../b", "a//b", "x" * 256, "a\\b", "ok/\x01"]


@pytest.mark.parametrize("prefix", ESCAPES)
def test_a_prefix_that_leaves_the_ledger_root_is_refused_at_validation(prefix: str) -> None:
    doc = {**minimal_doc(), "config": {"prefix": prefix}}
    assert "config.prefix" in messages_of(doc)


@pytest.mark.parametrize("prefix", ESCAPES)
def test_a_prefix_given_by_var_is_refused_too(prefix: str) -> None:
    doc = {**minimal_doc(), "config": {"prefix": "team/{{run.id}}"}}
    assert "config.prefix" in messages_of(doc, {"prefix": prefix})


@pytest.mark.parametrize("bucket", ["my/bucket", "../x", "A", "b" * 70])
def test_a_bucket_that_is_not_a_bucket_name_is_refused(bucket: str) -> None:
    assert "config.bucket" in messages_of({**minimal_doc(), "config": {"bucket": bucket}})


def test_a_relative_prefix_and_a_plain_bucket_are_valid() -> None:
    config = {"bucket": "s3://ml-runs", "prefix": "team/{{run.id}}"}
    assert messages_of({**minimal_doc(), "config": config}) == ""


def one_state_spec(config: str = "") -> WorkflowSpec:
    text = "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: t}\n"
    text += config + "initial: a\nstates:\n  a: {terminal: true, run: {shell: echo}}\n"
    return load_spec_from_str(text, "<t>", catalog=ToolCatalog())


def test_the_ledger_path_is_the_root_plus_the_prefix() -> None:
    spec = one_state_spec("config: {prefix: 'team/{{run.id}}'}\n")
    assert run_prefix_for(spec, ToolCatalog(), "r1", "file:///srv/runs") == "file:///srv/runs/team/r1"


@pytest.mark.parametrize("run_id", ["..", "../x", "a/../../b"])
def test_a_run_id_that_would_leave_the_root_is_refused_where_the_ledger_is_named(run_id: str) -> None:
    spec = one_state_spec()
    with pytest.raises(ConfigurationError, match=r"config\.prefix"):
        run_prefix_for(spec, ToolCatalog(), run_id, "file:///srv/runs")
