"""Image references, the reference's override order, and pinned digests in what a run launches (issue 30)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from npaflow.catalog.models import ToolCatalog, ToolEntry
from npaflow.images import ImageBinding, ImagePreflight, ImageReferenceError, launch_image, parse_image
from npaflow.render import RenderOptions, load_wave_yaml, render_wave
from npaflow.render.step_identity import step_identity
from npaflow.runtime.ledger.new_attempt import new_attempt
from npaflow.runtime.request import RunRequest
from npaflow.steps import PlanStep
from tests.helpers import CATALOG, plan_of

pytestmark = pytest.mark.unit

DIGEST = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


def test_a_short_name_is_docker_hub_library_and_a_host_with_a_port_is_a_registry() -> None:
    assert parse_image("ubuntu").model_dump() == {
        "registry": "docker.io",
        "repository": "library/ubuntu",
        "tag": "",
        "digest": "",
    }
    local = parse_image("127.0.0.1:5000/team/train:v1")
    assert (local.registry, local.repository, local.tag, local.is_loopback) == (
        "127.0.0.1:5000",
        "team/train",
        "v1",
        True,
    )
    assert parse_image("ghcr.io/acme/train:1.2").pinned(DIGEST) == f"ghcr.io/acme/train@{DIGEST}"
    assert parse_image("ubuntu:22.04").pinned(DIGEST) == f"ubuntu@{DIGEST}"
    assert parse_image(f"ghcr.io/acme/train:1.2@{DIGEST}").reference == DIGEST


@pytest.mark.parametrize(
    "text",
    ["", "Team/Train", "ghcr.io/acme/train:bad tag", "ghcr.io/acme/train@sha256:abc", "ghcr.io/acme/train:"],
)
def test_text_that_is_not_an_image_reference_is_refused_with_what_is_wrong(text: str) -> None:
    with pytest.raises(ImageReferenceError, match="image"):
        parse_image(text)


def step(tool_ref: str = "", image: str = "") -> PlanStep:
    profile = {"image": image} if image else {}
    return PlanStep(state="s", tool_ref=tool_ref, resources_profile=profile, shell="true")


TOOLS = ToolCatalog(
    tools={
        "train.sft": ToolEntry(argv=("x",), image="ghcr.io/acme/sft:catalog"),
        "train": ToolEntry(argv=("x",), image="ghcr.io/acme/train:family"),
    }
)


@pytest.mark.parametrize(
    ("overrides", "image", "expected"),
    [
        ({}, "", "ghcr.io/acme/sft:catalog"),  # the tool's catalog image
        ({}, "ghcr.io/acme/profile:1", "ghcr.io/acme/profile:1"),  # the profile beats the catalog
        ({"*": "ghcr.io/acme/all:1"}, "ghcr.io/acme/profile:1", "ghcr.io/acme/all:1"),  # --image beats both
        ({"train": "ghcr.io/acme/fam:1", "*": "ghcr.io/acme/all:1"}, "", "ghcr.io/acme/fam:1"),
        ({"tra": "ghcr.io/acme/no:1"}, "", "ghcr.io/acme/sft:catalog"),  # prefixes end at '.'
        ({"train": "ghcr.io/acme/fam:1", "train.sft": "ghcr.io/acme/exact:1"}, "", "ghcr.io/acme/exact:1"),
        ({"*": "none"}, "ghcr.io/acme/profile:1", ""),  # none: SkyPilot's default image
        ({"train": "ghcr.io/acme/fam:1"}, "tool://train", "ghcr.io/acme/fam:1"),
    ],
)
def test_overrides_follow_exact_then_longest_family_prefix_then_every_tool(
    overrides: dict[str, str], image: str, expected: str
) -> None:
    everyone = overrides.pop("*", "")
    binding = ImageBinding(image=everyone, overrides=overrides)
    assert launch_image(step("train.sft", image), TOOLS, binding).image == expected


def test_a_pinned_image_launches_by_digest_and_an_unpinned_one_by_its_tag() -> None:
    wave = plan_of("k8s-render.yaml").waves[0]
    pinned = ImageBinding(pins={"ghcr.io/acme/train:1.2": DIGEST}, preflight=ImagePreflight.VERIFIED)
    options = RenderOptions(run_id="r", workflow="k8s-render")
    _, (tagged,) = load_wave_yaml(render_wave(wave, CATALOG, options).yaml)
    _, (exact,) = load_wave_yaml(
        render_wave(wave, CATALOG, options.model_copy(update={"images": pinned})).yaml
    )
    assert tagged["resources"]["image_id"] == "docker:ghcr.io/acme/train:1.2"
    assert exact["resources"]["image_id"] == f"docker:ghcr.io/acme/train@{DIGEST}"


def test_the_stage_cache_keys_on_the_pinned_digest_not_the_tag() -> None:
    planned = plan_of("k8s-render.yaml").steps[0]

    def identity(digest: str) -> object:
        binding = ImageBinding(pins={"ghcr.io/acme/train:1.2": digest})
        return step_identity(
            planned.keyed or planned, CATALOG, infra="", secret_names=(), images=binding
        ).task

    assert identity(DIGEST) != identity(OTHER)
    assert f"ghcr.io/acme/train@{DIGEST}" in str(identity(DIGEST))


def test_each_attempt_record_names_its_image_and_the_digest_it_launched() -> None:
    wave = plan_of("k8s-render.yaml").waves[0]
    binding = ImageBinding(pins={"ghcr.io/acme/train:1.2": DIGEST})
    images = [launch_image(s, CATALOG, binding) for s in wave.steps]
    record = new_attempt(wave, 1, now="t", images=images)
    assert [(p.image, p.image_digest) for p in record.planned] == [("ghcr.io/acme/train:1.2", DIGEST)]


@pytest.mark.parametrize(
    ("images", "problem"),
    [
        ({"pins": {"ghcr.io/a/b:1": "sha256:short"}}, "is not 'sha256:' and 64 hex digits"),
        ({"pins": {"Not An Image": DIGEST}}, "has spaces"),
        ({"overrides": {"bad key!": "ghcr.io/a/b:1"}}, "must be a toolRef"),
        ({"image": "ghcr.io/a/b:bad tag"}, "has spaces"),
        ({"preflight": "trusted"}, "verified"),
    ],
)
def test_a_hostile_images_field_in_a_raw_run_input_is_refused_with_its_problem(
    images: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError, match=problem):
        RunRequest.model_validate({"spec": "x", "images": images})
