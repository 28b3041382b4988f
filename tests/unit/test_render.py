"""Rendering waves to SkyPilot YAML (reference §8, §11.1 rendering cases)."""

from __future__ import annotations

import pytest
import yaml

from npaflow.errors import RenderError
from npaflow.render import (
    RenderOptions,
    assert_no_unresolved_placeholders,
    load_wave_yaml,
    normalize_resources,
    render_wave,
)
from npaflow.traversal import WaveKind
from tests.helpers import CATALOG, plan_of

pytestmark = pytest.mark.unit

OPTIONS = RenderOptions(run_id="fanout-demo", workflow="fanout-demo")


def fanout_batches():
    return plan_of("fanout-demo.yaml", run_id="fanout-demo").waves


def test_job_group_render_emits_parallel_header() -> None:
    rendered = render_wave(fanout_batches()[0], CATALOG, OPTIONS)
    header, tasks = load_wave_yaml(rendered.yaml)
    assert header == {"name": "fanout-demo-01-shards", "execution": "parallel"}
    assert "primary_tasks" not in rendered.yaml
    assert [t["name"] for t in tasks] == ["shard-a", "shard-b"]


def test_each_member_run_contains_its_own_params() -> None:
    _, tasks = load_wave_yaml(render_wave(fanout_batches()[0], CATALOG, OPTIONS).yaml)
    assert "/images/a/" in tasks[0]["run"] and "/images/b/" not in tasks[0]["run"]
    assert "/images/b/" in tasks[1]["run"]


def test_one_member_batch_renders_as_a_serial_pipeline() -> None:
    header, tasks = load_wave_yaml(render_wave(fanout_batches()[1], CATALOG, OPTIONS).yaml)
    assert header == {"name": "fanout-demo-02-shards", "execution": "serial"}
    assert [t["name"] for t in tasks] == ["shard-c"]


def test_job_group_render_rejects_single_task() -> None:
    with pytest.raises(RenderError, match="at least two tasks"):
        render_wave(fanout_batches()[1], CATALOG, OPTIONS, execution=WaveKind.PARALLEL)


def test_render_dispatches_by_execution_mode() -> None:
    batch = fanout_batches()[0]
    assert "execution: parallel" in render_wave(batch, CATALOG, OPTIONS).yaml
    forced = render_wave(batch, CATALOG, OPTIONS, execution=WaveKind.SERIAL)
    assert "execution: serial" in forced.yaml


def test_envs_carry_identity_fences_and_attempt() -> None:
    options = RenderOptions(run_id="r", workflow="w", attempt=2, aws_endpoint_url="http://s3")
    rendered = render_wave(fanout_batches()[2], CATALOG, options)
    envs = load_wave_yaml(rendered.yaml)[1][0]["envs"]
    assert envs == {
        "NPA_WORKFLOW_NAME": "w",
        "NPA_WORKFLOW_RUN_ID": "r",
        "NPA_WORKFLOW_ATTEMPT_ID": rendered.launch_token,
        "NPA_WORKFLOW_FENCE_SEQUENCE": "3",
        "NPA_WORKFLOW_FENCE_ATTEMPT": "2",
        "AWS_ENDPOINT_URL": "http://s3",
        "NPA_WORKFLOW_STATE": "join",
    }
    assert rendered.job_name == "r-03-join-a2"


def test_every_task_carries_the_launch_token_in_metadata() -> None:
    rendered = render_wave(fanout_batches()[0], CATALOG, OPTIONS)
    tokens = {t["_metadata"]["npaflow_launch_token"] for t in load_wave_yaml(rendered.yaml)[1]}
    assert tokens == {rendered.launch_token}
    assert rendered.launch_token.startswith("npa-launch-")


def test_attempts_get_distinct_launch_tokens() -> None:
    batch = fanout_batches()[0]
    first = render_wave(batch, CATALOG, OPTIONS)
    second = render_wave(batch, CATALOG, OPTIONS.model_copy(update={"attempt": 2}))
    assert first.launch_token != second.launch_token


def test_kubernetes_profile_is_normalized_with_image_setup_and_config() -> None:
    batches = plan_of("k8s-render.yaml").waves
    _, (task,) = load_wave_yaml(render_wave(batches[0], CATALOG, OPTIONS).yaml)
    assert task["resources"] == {
        "cloud": "kubernetes",
        "accelerators": "H100:1",
        "cpus": "4+",
        "memory": "16+",
        "ephemeral_storage": 100,
        "image_id": "docker:ghcr.io/acme/train:1.2",
    }
    assert task["config"] == {
        "kubernetes": {"pod_config": {"spec": {"nodeSelector": {"pool": "gpu"}}}, "provision_timeout": 900}
    }
    assert task["setup"] == "pip install -r requirements.txt"
    assert task["run"].splitlines() == [
        "export HF_HUB_OFFLINE=1",
        "python3 prepare.py --out s3://bucket/plan-run/prepared/",
    ]


def test_gang_profile_renders_task_level_num_nodes_and_drops_disk_off_kubernetes() -> None:
    _, (task,) = load_wave_yaml(render_wave(plan_of("k8s-render.yaml").waves[1], CATALOG, OPTIONS).yaml)
    assert task["num_nodes"] == 2
    assert task["resources"] == {
        "cloud": "aws",
        "cpus": 8,
        "memory": "32",
        "use_spot": True,
        "region": "us-east-1",
    }
    assert "num_nodes" not in task["resources"]


def test_shell_commands_run_under_bash_c_and_argv_is_quoted() -> None:
    batches = plan_of("serial-pipeline.yaml").waves
    runs = [load_wave_yaml(render_wave(b, CATALOG, OPTIONS).yaml)[1][0]["run"] for b in batches]
    assert runs[0] == "bash -c 'echo ingest'"
    assert runs[3] == "python3 train.py --epochs 3"


def test_memory_units_are_stripped() -> None:
    assert normalize_resources({"memory": "16Gi"}) == {"memory": "16"}
    assert normalize_resources({"memory": "8g", "cpus": None}) == {"memory": "8"}


def test_placeholder_guard_rejects_bare_placeholders_outside_scripts() -> None:
    text = "name: x\nexecution: serial\n---\nname: t\nenvs:\n  A: ${BUCKET}/out\nrun: echo ${HOME}\n"
    with pytest.raises(RenderError, match=r"unresolved placeholders: \$\{BUCKET\}"):
        assert_no_unresolved_placeholders(text)


def test_placeholder_guard_allows_defaults_and_scripts() -> None:
    assert_no_unresolved_placeholders(
        "name: t\nrun: echo ${HOME}\nsetup: echo ${X}\nenvs:\n  A: ${B:-default}\n"
    )


def test_placeholder_guard_checks_nested_run_keys() -> None:
    with pytest.raises(RenderError):
        assert_no_unresolved_placeholders("name: t\nconfig:\n  run: ${NESTED}\n")


def test_state_with_a_command_that_resolves_empty_names_the_state() -> None:
    from npaflow.plan import build_plan
    from tests.helpers import load_doc, minimal_doc

    doc = minimal_doc(work={"run": {"shell": "{{config.cmd}}"}, "next": "done"})
    doc["config"] = {"cmd": ""}
    batch = build_plan(load_doc(doc), CATALOG).waves[0]
    with pytest.raises(RenderError, match="state work: planned step 'work' has no command"):
        render_wave(batch, CATALOG, OPTIONS)


def test_secret_values_never_reach_the_rendered_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = "canary-7f3a9c-secret-value"
    monkeypatch.setenv("HF_TOKEN", canary)
    options = RenderOptions(run_id="r", workflow="w", secret_env=("HF_TOKEN", "WANDB_API_KEY"))
    for batch in plan_of("k8s-render.yaml").waves:
        rendered = render_wave(batch, CATALOG, options)
        assert canary not in rendered.yaml
        assert "secrets" not in yaml.safe_load_all(rendered.yaml).__next__()
        assert rendered.secret_names == ("HF_TOKEN", "WANDB_API_KEY")
