"""Preflight: every image the spec's plans launch, resolved against its registry, all problems in one list."""

from __future__ import annotations

import asyncio
import hashlib

import aiohttp

from npaflow.catalog.models import ToolCatalog
from npaflow.cli.images.credentials import Credentials, CredentialsError, credentials_for
from npaflow.cli.images.digest_cache import DigestCache
from npaflow.cli.images.registry import RegistryClient, Resolution
from npaflow.document.models import WorkflowSpec
from npaflow.images import (
    ImageBinding,
    ImageCheck,
    ImageReferenceError,
    ImageStatus,
    PreflightReport,
    parse_image,
)
from npaflow.images.plan_images import plan_images
from npaflow.plan import spec_plans

#: Registries asked at once; each answers in a round trip or two.
CONCURRENCY = 8
TIMEOUT_SECONDS = 20.0


def images_of(spec: WorkflowSpec, catalog: ToolCatalog, binding: ImageBinding) -> dict[str, list[str]]:
    """Every image the spec's plans launch (after overrides) -> the states that launch it."""
    return plan_images(spec_plans(spec, catalog), catalog, binding)


def preflight(
    images: dict[str, list[str]], *, pins: dict[str, str] | None = None, cache: DigestCache | None = None
) -> PreflightReport:
    """Check every image (a pinned one by its digest); the report lists each with its answer."""
    return asyncio.run(preflight_async(images, pins=pins, cache=cache))


async def preflight_async(
    images: dict[str, list[str]], *, pins: dict[str, str] | None = None, cache: DigestCache | None = None
) -> PreflightReport:
    """`preflight` inside a running event loop (the commands that then talk to Temporal)."""
    pins, cache = pins or {}, cache if cache is not None else DigestCache()
    gate = asyncio.Semaphore(CONCURRENCY)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(timeout=timeout, trust_env=True) as session:
        client = RegistryClient(session)

        async def one(image: str, used_by: list[str]) -> ImageCheck:
            async with gate:
                return await _check(client, cache, image, pins.get(image, ""), tuple(used_by))

        checks = await asyncio.gather(*(one(image, used) for image, used in images.items()))
    cache.save()
    return PreflightReport(checks=tuple(checks))


async def _check(
    client: RegistryClient, cache: DigestCache, image: str, pinned: str, used_by: tuple[str, ...]
) -> ImageCheck:
    try:
        reference = parse_image(image)
        if pinned:
            reference = reference.model_copy(update={"digest": pinned})
    except ImageReferenceError as exc:
        fix = "correct the image name in the spec, its tool's catalog entry or --image-override"
        return ImageCheck(
            image=image, status=ImageStatus.NOT_FOUND, detail=str(exc), fix=fix, used_by=used_by
        )
    try:
        credentials = credentials_for(reference)
    except CredentialsError as exc:
        return ImageCheck(image=image, status=ImageStatus.FORBIDDEN, detail=str(exc), used_by=used_by)
    key = f"{reference.registry}/{reference.repository}:{reference.reference} {identity(credentials)}"
    digest = cache.get(key)
    found = (
        Resolution(ImageStatus.OK, digest=digest) if digest else await client.resolve(reference, credentials)
    )
    if found.status is ImageStatus.OK:
        cache.put(key, found.digest)
    return ImageCheck(
        image=image,
        status=found.status,
        digest=found.digest,
        detail=found.detail,
        fix=_fix(found.status, image, reference.registry),
        used_by=used_by,
    )


def _fix(status: ImageStatus, image: str, registry: str) -> str:
    if status is ImageStatus.NOT_FOUND:
        return f"build and push it: docker build -t {image} . && docker push {image}"
    if status is ImageStatus.FORBIDDEN:
        return (
            f"log in to {registry} (docker login {registry}, which writes $DOCKER_CONFIG/config.json), "
            f"or set NPAFLOW_REGISTRY_HOST={registry} with NPAFLOW_REGISTRY_USERNAME and "
            "NPAFLOW_REGISTRY_PASSWORD"
        )
    if status is ImageStatus.UNAVAILABLE:
        return (
            f"check that {registry} is reachable and answers as a registry, then run again "
            "(--skip-image-preflight launches the tags unverified)"
        )
    return ""


def identity(credentials: Credentials | None) -> str:
    """Who asked, for the digest cache: a verified answer for one identity is not another's."""
    if credentials is None:
        return "anonymous"
    material = f"{credentials.username}\0{credentials.secret}".encode()
    return hashlib.sha256(material).hexdigest()[:16]
