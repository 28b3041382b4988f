"""Property: mutated example specs give errors or a plan, never anything else."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npaflow.errors import NpaflowError
from npaflow.plan import build_plan
from npaflow.spec import load_spec_from_str
from tests.helpers import CATALOG, EXAMPLES, SPECS

pytestmark = pytest.mark.unit

DOCS = [
    yaml.safe_load(p.read_text())
    for p in [*sorted(EXAMPLES.glob("*.yaml")), *sorted(SPECS.glob("*.yaml"))]
    if "ToolCatalog" not in p.read_text()
]
KEYS = [
    "run",
    "toolRef",
    "next",
    "transitions",
    "terminal",
    "sequence",
    "parallel",
    "loop",
    "params",
    "trigger",
    "outputs",
    "maxConcurrency",
    "parallelCount",
    "resources",
    "writesDecision",
    "multiNodeMode",
    "needs",
    "inputs",
    "bogus",
    "x-note",
]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70),
    st.text(max_size=12),
    st.sampled_from(
        [
            "{{config.nope}}",
            "{{loop.x}}",
            "{{state.a.uri}}",
            "{{config.a|zip}}",
            "promote_checkpoint",
            "loop_back",
            "{{config.max_iterations}}",
        ]
    ),
    st.lists(st.text(max_size=6), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
EXAMPLES_COUNT = int(os.environ.get("NPAFLOW_HYPOTHESIS_EXAMPLES", "2000"))


@st.composite
def mutated_documents(draw: st.DrawFn, long_chains: bool = False) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(DOCS)))
    for _ in range(draw(st.integers(1, 4))):
        states = doc.get("states") if isinstance(doc, dict) else None
        if not isinstance(states, dict) or not states:
            break
        name = draw(st.sampled_from(sorted(states)))
        action = draw(
            st.sampled_from(
                ["drop", "rename", "set", "cycle", "top", "state", "nest", "chain", "seqnest", "alias"]
            )
        )
        body = states[name]
        if action == "drop" and isinstance(body, dict) and body:
            body.pop(draw(st.sampled_from(sorted(body))))
        elif action == "rename":
            states[name + draw(st.text("xyz-", min_size=1, max_size=3))] = states.pop(name)
        elif action == "set" and isinstance(body, dict):
            body[draw(st.sampled_from(KEYS))] = draw(VALUES)
        elif action == "cycle" and isinstance(body, dict):
            body["next"] = draw(st.sampled_from(sorted(states)))
        elif action == "nest":
            states[name] = nested(draw(st.integers(1, 130)), draw(VALUES))
        elif action == "chain":
            add_chain(states, name, draw(st.sampled_from([1100, 2500] if long_chains else [5, 50])))
        elif action == "seqnest":
            add_sequence_nesting(states, name, draw(st.integers(2, 80)), draw(st.booleans()))
        elif action == "alias" and isinstance(body, dict):
            body["params"] = shared_fanout(draw(st.integers(1, 9)), draw(st.integers(2, 9)))
        elif action == "top":
            doc[draw(st.sampled_from(["config", "initial", "resources", "apiVersion", "metadata"]))] = draw(
                VALUES
            )
        else:
            states[name] = draw(VALUES)
    return doc


def nested(depth: int, leaf: Any) -> Any:
    """A value nested `depth` levels deep, alternating lists and mappings."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def add_chain(states: dict[str, Any], name: str, length: int) -> None:
    """Append a `next` chain of `length` states (loops and sequences on the way) after `name`."""
    previous = name
    for index in range(length):
        current = f"chain-{index}"
        states[current] = {"run": {"shell": f"echo {index} {{{{run.id}}}}"}}
        if index % 7 == 3:
            states[current] = {"sequence": [f"chain-leaf-{index}"], "loop": {"max": 2}}
            states[f"chain-leaf-{index}"] = {"run": {"shell": "echo leaf"}}
        if isinstance(states.get(previous), dict):
            states[previous]["next"] = current
        previous = current
    states[previous]["terminal"] = True


def add_sequence_nesting(states: dict[str, Any], name: str, depth: int, cyclic: bool) -> None:
    """Make `name` a sequence nested `depth` levels deep (closing a containment cycle if asked)."""
    for level in range(depth):
        child = f"nest-{level}"
        states[name if level == 0 else f"nest-{level - 1}"] = {"sequence": [child]}
    states[f"nest-{depth - 1}"] = {"sequence": [name]} if cyclic else {"run": {"shell": "echo"}}


def shared_fanout(levels: int, fanout: int) -> Any:
    """A value whose parts are shared objects: YAML dumps them as anchors and aliases."""
    value: Any = ["x"]
    for _ in range(levels):
        value = [value] * fanout
    return {"shared": value}


@settings(
    max_examples=EXAMPLES_COUNT,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_documents(), st.sampled_from(["", "promote", "loop_back"]))
def test_mutated_specs_validate_or_plan_and_never_raise_anything_else(doc: Any, assume: str) -> None:
    text = yaml.safe_dump(doc, sort_keys=False)
    try:
        spec = load_spec_from_str(text, "m.yaml", catalog=CATALOG)
        build_plan(spec, CATALOG, assume_decision=assume)
    except NpaflowError:
        pass


@settings(
    max_examples=max(20, EXAMPLES_COUNT // 40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_documents(long_chains=True))
def test_mutated_specs_with_long_chains_validate_or_plan_without_recursion_limits(doc: Any) -> None:
    test_mutated_specs_validate_or_plan_and_never_raise_anything_else.hypothesis.inner_test(doc, "")


def test_example_specs_exist() -> None:
    assert len(DOCS) >= 6
    assert Path(EXAMPLES).is_dir()
