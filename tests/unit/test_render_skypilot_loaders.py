"""Every rendered wave loads through SkyPilot 0.12.2's own loaders (skypilot ref §5)."""

from __future__ import annotations

import pytest

from npaflow.render import RenderOptions, load_wave_yaml, render_wave
from tests.helpers import CATALOG, EXAMPLES, SPECS, plan_of

pytestmark = [pytest.mark.unit, pytest.mark.skypilot]

dag_utils = pytest.importorskip("sky.utils.dag_utils", reason="install the 'skypilot' extra")

SPEC_FILES = sorted(
    [
        *(p.name for p in EXAMPLES.glob("*.yaml")),
        "fanout-demo.yaml",
        "k8s-render.yaml",
        "serial-pipeline.yaml",
        "gate-loop-ref.yaml",
        "token-factory-gate-loop.yaml",
    ]
)
assert (SPECS / "fanout-demo.yaml").exists()


def load_with_skypilot(text: str):
    header, _ = load_wave_yaml(text)
    loader = (
        dag_utils.load_job_group_from_yaml_str
        if header["execution"] == "parallel"
        else dag_utils.load_chain_dag_from_yaml_str
    )
    dag = loader(text)
    dag_utils.maybe_infer_and_fill_dag_and_task_names(dag)
    return dag


@pytest.mark.parametrize("name", SPEC_FILES)
@pytest.mark.parametrize("assume", ["promote_checkpoint", "loop_back"])
def test_every_wave_batch_loads_through_skypilot(name: str, assume: str) -> None:
    plan = plan_of(name, assume, run_id="run-7")
    options = RenderOptions(run_id="run-7", workflow=name.removesuffix(".yaml"))
    assert plan.waves
    for batch in plan.waves:
        rendered = render_wave(batch, CATALOG, options)
        dag = load_with_skypilot(rendered.yaml)
        _, documents = load_wave_yaml(rendered.yaml)
        assert dag.name == rendered.job_name
        assert dag.is_job_group() == (len(batch.steps) > 1)
        if dag.is_job_group():
            assert [t.name for t in dag.tasks] == list(rendered.task_names)
        assert len(dag.tasks) == len(batch.steps)
        for task, document in zip(dag.tasks, documents, strict=True):
            assert task.num_nodes == document.get("num_nodes", 1)
            assert task.envs["NPA_WORKFLOW_FENCE_SEQUENCE"] == str(batch.sequence)
            assert task.envs["NPA_WORKFLOW_RUN_ID"] == "run-7"
            resources = next(iter(task.resources))
            if "cpus" in document["resources"]:
                assert str(resources.cpus) == str(document["resources"]["cpus"])
            if "accelerators" in document["resources"]:
                assert resources.accelerators


def test_job_group_members_keep_their_state_names_in_skypilot() -> None:
    batch = plan_of("fanout-demo.yaml").waves[0]
    dag = load_with_skypilot(render_wave(batch, CATALOG, RenderOptions(run_id="r", workflow="w")).yaml)
    assert [t.name for t in dag.tasks] == ["shard-a", "shard-b"]
    assert dag.primary_tasks in (None, [])


def test_gang_task_loads_with_two_nodes() -> None:
    batch = plan_of("gang.yaml").waves[0]
    dag = load_with_skypilot(render_wave(batch, CATALOG, RenderOptions(run_id="r", workflow="g")).yaml)
    assert dag.tasks[0].num_nodes == 2


def test_kubernetes_task_loads_with_image_and_at_least_resources() -> None:
    batch = plan_of("k8s-render.yaml").waves[0]
    dag = load_with_skypilot(render_wave(batch, CATALOG, RenderOptions(run_id="r", workflow="k")).yaml)
    resources = next(iter(dag.tasks[0].resources))
    assert resources.image_id and "ghcr.io/acme/train:1.2" in str(resources.image_id)
    assert str(resources.cpus) == "4+"


@pytest.mark.parametrize(("infra", "cloud"), [("aws/us-east-1", "AWS"), ("gcp", "GCP")])
def test_run_infra_reaches_every_task_of_a_job_group_and_a_pipeline(infra: str, cloud: str) -> None:
    options = RenderOptions(run_id="r", workflow="w", infra=infra)
    for wave in plan_of("fanout-demo.yaml").waves:
        dag = load_with_skypilot(render_wave(wave, CATALOG, options).yaml)
        for task in dag.tasks:
            resources = next(iter(task.resources))
            assert str(resources.cloud) == cloud
            if "/" in infra:
                assert resources.region == infra.split("/")[1]


def test_run_infra_replaces_the_profile_cloud_and_region() -> None:
    wave = plan_of("k8s-render.yaml").waves[1]
    options = RenderOptions(run_id="r", workflow="k", infra="gcp/us-central1")
    _, (document,) = load_wave_yaml(render_wave(wave, CATALOG, options).yaml)
    assert document["resources"]["infra"] == "gcp/us-central1"
    assert "cloud" not in document["resources"] and "region" not in document["resources"]
    resources = next(iter(load_with_skypilot(render_wave(wave, CATALOG, options).yaml).tasks[0].resources))
    assert (str(resources.cloud), resources.region) == ("GCP", "us-central1")
