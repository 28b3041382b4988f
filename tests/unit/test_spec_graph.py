"""`plan-spec --format mermaid|dot|svg`: the spec as a graph, every state, branch, loop and group."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from xml.etree import ElementTree

import pydot
import pytest

from npaflow.cli import run
from npaflow.shipped import STARTER_SPEC
from npaflow.spec import load_spec_from_path
from npaflow.spec_graph import spec_graph, to_dot, to_mermaid
from tests.helpers import CATALOG, EXAMPLES, load_fixture

pytestmark = pytest.mark.unit

SPECS = [*sorted(EXAMPLES.glob("*.yaml")), STARTER_SPEC]


def rendered(path: Path, form: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(["plan-spec", str(path), "--format", form]) == 0
    return out.getvalue()


def node_names(graph: pydot.Dot | pydot.Subgraph) -> set[str]:
    """Every node a DOT graph declares, in nested clusters too."""
    names = {node.get_name().strip('"') for node in graph.get_nodes()}
    for sub in graph.get_subgraphs():
        names |= node_names(sub)
    return names


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_example_renders_as_dot_that_graphviz_parsers_read(path: Path) -> None:
    (graph,) = pydot.graph_from_dot_data(rendered(path, "dot"))
    assert set(load_spec_from_path(path, catalog=CATALOG).states) <= node_names(graph)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_example_renders_as_an_svg_document_with_a_node_or_box_per_state(path: Path) -> None:
    root = ElementTree.fromstring(rendered(path, "svg"))
    drawn = {g.get("data-state") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-state")}
    assert drawn == set(load_spec_from_path(path, catalog=CATALOG).states)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_every_example_renders_as_a_mermaid_flowchart_naming_every_state(path: Path) -> None:
    text = rendered(path, "mermaid")
    assert text.startswith("flowchart TD\n")
    for name in load_spec_from_path(path, catalog=CATALOG).states:
        assert f"s_{name.replace('-', '_')}" in text


def test_branches_are_labelled_with_their_decision_and_loops_with_their_bound() -> None:
    text = to_mermaid(spec_graph(load_fixture("gate-loop.yaml")))
    assert "s_route -->|promote_checkpoint| s_publish" in text
    assert "s_route -->|loop_back| s_escalate" in text
    assert 'subgraph s_refine["refine: sequence, loop max 3 until promote_checkpoint"]' in text
    assert "s_quality_gate -.->|loop max 3 until promote_checkpoint| s_caption_batch" in text
    assert 's_publish(["publish"])' in text  # terminal


def test_a_group_shows_its_concurrency_and_a_nested_loop_sits_inside_its_parent() -> None:
    sweep = to_dot(spec_graph(load_fixture("parallel-sweep.yaml")))
    assert 'label="sweep: parallel, maxConcurrency 2";' in sweep
    nested = to_mermaid(spec_graph(load_fixture("nested-loop.yaml"))).splitlines()
    outer = nested.index('  subgraph s_outer["outer: sequence, loop max 3 until promote_checkpoint"]')
    assert nested[outer + 1].startswith('    subgraph s_inner["inner: sequence, loop max 2"]')
