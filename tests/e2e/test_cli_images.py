"""Images are checked first and pinned after (issue 30), against a real registry on loopback."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.summary import RunSummary
from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness
from tests.helpers import NPAFLOW, ROOT
from tests.integration.fake_skypilot import FakeSkyPilotApi, statuses
from tests.registry_server import PASSWORD, USER, Registry, docker_config, start_registry
from tests.registry_tokens import TokenService

pytestmark = pytest.mark.e2e


@pytest.fixture
def registries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Registry, Registry]]:
    """An open registry and one behind htpasswd; the digest cache and Docker config private to the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-docker-config"))
    public = start_registry(tmp_path / "public")
    protected = start_registry(tmp_path / "protected", protected=True)
    try:
        yield public, protected
    finally:
        public.stop()
        protected.stop()


def image_spec(tmp_path: Path, images: dict[str, str]) -> Path:
    """A chain of states, each launching one image, in the order given."""
    names = list(images)
    states = {}
    for index, name in enumerate(names):
        body: dict[str, object] = {"run": {"shell": f"echo {name}"}, "resources": f"r-{name}"}
        body.update({"next": names[index + 1]} if index + 1 < len(names) else {"terminal": True})
        states[name] = body
    doc = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "images"},
        "resources": {f"r-{name}": {"cpus": 1, "image": image} for name, image in images.items()},
        "initial": names[0],
        "states": states,
    }
    path = tmp_path / "images.yaml"
    path.write_text(json.dumps(doc))
    return path


async def test_submit_lists_a_missing_and_a_protected_image_at_once_and_starts_nothing(
    env: WorkflowEnvironment, fake_sky_harness: Harness, registries: tuple[Registry, Registry], tmp_path: Path
) -> None:
    public, protected = registries
    present = public.push_image("team/train", "v1", "train v1")
    protected.push_image("team/secret", "v1", "secret v1")
    spec = image_spec(
        tmp_path,
        {
            "present": f"{public.host}/team/train:v1",
            "missing": f"{public.host}/team/absent:v1",
            "guarded": f"{protected.host}/team/secret:v1",
        },
    )
    sky = ("--backend", "skypilot")
    submitted = await npaflow(env, fake_sky_harness, "submit", str(spec), "--run-id", "img-refused", *sky)
    scheduled = await npaflow(
        env, fake_sky_harness, "schedule", "create", "img-nightly", str(spec), "--every", "1h", *sky
    )
    assert submitted.returncode == 2, submitted.stderr
    assert "image preflight failed, nothing was started" in submitted.stderr
    assert f"not_found  {public.host}/team/absent:v1 (missing)" in submitted.stderr
    assert f"docker push {public.host}/team/absent:v1" in submitted.stderr
    assert f"forbidden  {protected.host}/team/secret:v1 (guarded)" in submitted.stderr
    assert f"docker login {protected.host}" in submitted.stderr
    assert f"ok {present}  {public.host}/team/train:v1 (present)" in submitted.stderr  # all three listed
    assert "2 of 3 images cannot be launched" in submitted.stderr
    assert "Traceback" not in submitted.stderr
    with pytest.raises(Exception, match="not found"):
        await env.client.get_workflow_handle("img-refused").describe()
    assert scheduled.returncode == 2 and "not_found" in scheduled.stderr
    with pytest.raises(Exception, match="not found"):
        await env.client.get_schedule_handle("img-nightly").describe()


def run_handle(env: WorkflowEnvironment, run_id: str) -> WorkflowHandle[Any, RunSummary]:
    return env.client.get_workflow_handle(run_id, result_type=RunSummary)


def launched_images(fake: FakeSkyPilotApi) -> list[str]:
    """The image_id of every task the backend was sent, launch by launch."""
    return [
        line.split("image_id:", 1)[1].strip()
        for text in fake.yamls
        for line in text.splitlines()
        if "image_id:" in line
    ]


async def test_a_run_launches_the_pinned_digests_after_the_tag_moves_and_so_does_its_resume(
    env: WorkflowEnvironment,
    fake_sky_harness: Harness,
    fake_sky: FakeSkyPilotApi,
    registries: tuple[Registry, Registry],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    public, protected = registries
    monkeypatch.setenv("DOCKER_CONFIG", str(docker_config(tmp_path / "docker", protected.host)))
    original = public.push_index("team/train", "v1", "train v1")  # a multi-arch index
    guarded = protected.push_image("team/secret", "v1", "secret v1")
    train, secret = f"{public.host}/team/train:v1", f"{protected.host}/team/secret:v1"
    spec = image_spec(tmp_path, {"prepare": train, "train": train, "publish": secret})
    fake_sky.scripts = [[statuses("SUCCEEDED")], [statuses("FAILED")]]  # the second launch fails once
    async with fake_sky_harness.worker():
        started = await npaflow(
            env,
            fake_sky_harness,
            "submit",
            str(spec),
            "--run-id",
            "img-pinned",
            "--backend",
            "skypilot",
            "--poll-seconds",
            "0.1",
        )
        moved = public.push_image("team/train", "v1", "train v2: the tag moved")
        failed = await fake_sky_harness.finish(run_handle(env, "img-pinned"))
        resumed = await npaflow(env, fake_sky_harness, "resume", "img-pinned")
        outcome = await fake_sky_harness.finish(run_handle(env, "img-pinned"))
    assert started.returncode == 0, started.stderr
    assert "images: 2 verified and pinned by digest" in started.stderr
    assert failed.status == "failed" and resumed.returncode == 0, resumed.stderr
    assert outcome.status == "succeeded", outcome.error
    pinned_train = f"docker:{public.host}/team/train@{original}"
    assert launched_images(fake_sky) == [
        pinned_train,
        pinned_train,
        pinned_train,
        f"docker:{protected.host}/team/secret@{guarded}",
    ]
    assert moved != original and moved not in "".join(fake_sky.yamls)
    ledger = outcome.ledger
    assert ledger.images is not None and ledger.images.preflight.value == "verified"
    assert ledger.images.pins == {train: original, secret: guarded}
    planned = {step.state: (step.image, step.image_digest) for wave in ledger.waves for step in wave.planned}
    assert planned == {"prepare": (train, original), "train": (train, original), "publish": (secret, guarded)}


async def test_an_unreachable_registry_is_unavailable_and_nothing_starts_unless_preflight_is_skipped(
    env: WorkflowEnvironment,
    fake_sky_harness: Harness,
    fake_sky: FakeSkyPilotApi,
    registries: tuple[Registry, Registry],
    tmp_path: Path,
) -> None:
    public, _ = registries
    public.push_image("team/train", "v1", "train v1")
    public.stop()
    image = f"{public.host}/team/train:v1"
    spec = image_spec(tmp_path, {"train": image})
    refused = await npaflow(
        env, fake_sky_harness, "submit", str(spec), "--run-id", "img-down", "--backend", "skypilot"
    )
    async with fake_sky_harness.worker():
        skipped = await npaflow(
            env,
            fake_sky_harness,
            "submit",
            str(spec),
            "--run-id",
            "img-skip",
            "--backend",
            "skypilot",
            "--skip-image-preflight",
            "--wait",
            "--poll-seconds",
            "0.1",
        )
        outcome = await fake_sky_harness.finish(run_handle(env, "img-skip"))
    assert refused.returncode == 2 and f"unavailable  {image} (train)" in refused.stderr
    with pytest.raises(Exception, match="not found"):
        await env.client.get_workflow_handle("img-down").describe()
    assert skipped.returncode == 0, skipped.stderr
    assert launched_images(fake_sky) == [f"docker:{image}"]  # the tag, unverified
    assert outcome.ledger.images is not None and outcome.ledger.images.preflight.value == "skipped"


def offline(*args: str) -> subprocess.CompletedProcess[str]:
    """A command that needs no Temporal server (the registries are the test's)."""
    return subprocess.run([NPAFLOW, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_preflight_images_answers_ok_not_found_and_forbidden_and_a_login_turns_forbidden_ok(
    registries: tuple[Registry, Registry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    public, protected = registries
    index = public.push_index("team/multi", "v1", "multi v1")
    guarded = protected.push_image("team/secret", "v1", "secret v1")
    spec = image_spec(
        tmp_path,
        {
            "multi": f"{public.host}/team/multi:v1",
            "missing": f"{public.host}/team/multi:v9",
            "guarded": f"{protected.host}/team/secret:v1",
        },
    )
    anonymous = offline("preflight-images", str(spec), "--json")
    monkeypatch.setenv("DOCKER_CONFIG", str(docker_config(tmp_path / "docker", protected.host)))
    logged_in = offline("preflight-images", str(spec))
    assert anonymous.returncode == 2, anonymous.stderr
    answers = {c["image"]: (c["status"], c["digest"]) for c in json.loads(anonymous.stdout)["images"]}
    assert answers == {
        f"{public.host}/team/multi:v1": ("ok", index),  # a multi-arch index resolves to the index digest
        f"{public.host}/team/multi:v9": ("not_found", ""),
        f"{protected.host}/team/secret:v1": ("forbidden", ""),
    }
    assert logged_in.returncode == 2  # the missing tag is still missing
    assert f"ok {guarded}  {protected.host}/team/secret:v1 (guarded)" in logged_in.stdout
    assert "1 of 3 images cannot be launched" in logged_in.stdout


def test_render_and_plan_spec_show_the_digests_with_resolve_images_and_overrides_pick_the_image(
    registries: tuple[Registry, Registry], tmp_path: Path
) -> None:
    public, _ = registries
    tagged = public.push_image("team/train", "v1", "train v1")
    other = public.push_image("team/eval", "v2", "eval v2")
    spec = image_spec(tmp_path, {"train": f"{public.host}/team/train:v1"})
    rendered = offline("render", str(spec), "--out", str(tmp_path / "out"), "--resolve-images")
    planned = offline("plan-spec", str(spec), "--waves", "--resolve-images")
    unresolved = offline("plan-spec", str(spec), "--waves")
    overridden = offline(
        "plan-spec", str(spec), "--waves", "--resolve-images", "--image", f"{public.host}/team/eval:v2"
    )
    assert rendered.returncode == 0, rendered.stderr
    text = Path(rendered.stdout.split()[0]).read_text()
    assert f"image_id: docker:{public.host}/team/train@{tagged}" in text
    assert f"    image {public.host}/team/train@{tagged}" in planned.stdout
    assert f"    image {public.host}/team/train:v1" in unresolved.stdout
    assert f"    image {public.host}/team/eval@{other}" in overridden.stdout


def test_a_registry_behind_a_bearer_token_service_answers_per_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-docker-config"))
    tokens = TokenService(tmp_path, USER, PASSWORD)
    registry = start_registry(tmp_path / "tokens", tokens=tokens)
    host = registry.host
    try:
        public = registry.push_image("public/train", "v1", "public train")
        private = registry.push_image("private/secret", "v1", "private secret")
        spec = image_spec(
            tmp_path, {"open": f"{host}/public/train:v1", "closed": f"{host}/private/secret:v1"}
        )
        anonymous = offline("preflight-images", str(spec))
        monkeypatch.setenv("NPAFLOW_REGISTRY_HOST", registry.host)
        monkeypatch.setenv("NPAFLOW_REGISTRY_USERNAME", USER)
        monkeypatch.setenv("NPAFLOW_REGISTRY_PASSWORD", PASSWORD)
        member = offline("preflight-images", str(spec))
        monkeypatch.setenv("NPAFLOW_REGISTRY_PASSWORD", "wrong")
        impostor = offline("preflight-images", str(spec))  # a verified answer is not shared across identities
    finally:
        registry.stop()
        tokens.stop()
    assert anonymous.returncode == 2
    assert f"ok {public}  {registry.host}/public/train:v1 (open)" in anonymous.stdout
    refused = f"forbidden  {host}/private/secret:v1 (closed): registry {host} refused an anonymous pull"
    assert refused in anonymous.stdout
    assert member.returncode == 0 and f"ok {private}  {registry.host}/private/secret:v1" in member.stdout
    assert impostor.returncode == 2
    assert (
        "refused the credentials from NPAFLOW_REGISTRY_USERNAME/NPAFLOW_REGISTRY_PASSWORD" in impostor.stdout
    )


async def test_on_the_local_backend_an_image_not_pushed_is_a_warning_unless_images_are_required(
    env: WorkflowEnvironment, local_harness: Harness, registries: tuple[Registry, Registry], tmp_path: Path
) -> None:
    public, _ = registries
    image = f"{public.host}/team/absent:v1"
    spec = image_spec(tmp_path, {"train": image})
    required = await npaflow(
        env, local_harness, "submit", str(spec), "--run-id", "img-req", "--require-images"
    )
    warned = await npaflow(env, local_harness, "submit", str(spec), "--run-id", "img-local")
    assert required.returncode == 2 and f"not_found  {image} (train)" in required.stderr
    assert warned.returncode == 0, warned.stderr
    assert "the local backend runs no images, so these were not required" in warned.stderr
    assert f"not_found  {image} (train)" in warned.stderr and "--resolve-images" in warned.stderr
    description = await env.client.get_workflow_handle("img-local").describe()
    assert description.status is not None
    await env.client.get_workflow_handle("img-local").terminate()
