"""Params overlay rules (reference §2.4) as seen through plans."""

from __future__ import annotations

import pytest

from npaflow.plan import build_plan
from tests.helpers import CATALOG, load_doc, minimal_doc, plan_of

pytestmark = pytest.mark.unit


def test_params_overlay_reaches_argv() -> None:
    plan = plan_of("fanout-demo.yaml")
    argv = {step.state: " ".join(step.argv) for step in plan.steps}
    assert "/images/a/" in argv["shard-a"]
    assert "/images/b/" in argv["shard-b"]


def test_params_resolve_against_the_base_config_not_other_params() -> None:
    doc = minimal_doc(
        work={
            "run": {"shell": "echo {{config.a}} {{config.b}}"},
            "next": "done",
            "params": {"a": "A", "b": "{{config.a}}-b"},
        }
    )
    doc["config"] = {"a": "base"}
    plan = build_plan(load_doc(doc), CATALOG)
    assert plan.steps[0].shell == "echo A base-b"


def test_non_string_params_are_inserted_as_they_are() -> None:
    doc = minimal_doc(
        work={
            "run": {"shell": "echo {{config.n}} {{config.f}}"},
            "next": "done",
            "params": {"n": 3, "f": True},
        }
    )
    assert build_plan(load_doc(doc), CATALOG).steps[0].shell == "echo 3 True"


def test_params_reach_outputs_and_resource_profiles() -> None:
    doc = minimal_doc(
        work={
            "run": {"shell": "x"},
            "next": "done",
            "resources": "gpu",
            "params": {"gpu": "H100:2"},
            "outputs": [{"uri": "s3://b/{{config.gpu}}", "schema": "o"}],
        }
    )
    doc["config"] = {"gpu": "T4:1"}
    doc["resources"] = {"gpu": {"accelerators": "{{config.gpu}}"}}
    step = build_plan(load_doc(doc), CATALOG).steps[0]
    assert step.resources_profile == {"accelerators": "H100:2"}
    assert step.outputs[0].uri == "s3://b/H100:2"
