"""Container image references as Docker reads them: registry, repository, tag, digest.

`ubuntu` is `docker.io/library/ubuntu:latest`; a first component with a `.`
or `:`, or `localhost`, is a registry host. A digest pins the content; a tag
is a name that can move. Pure: parsing only, the registry is asked elsewhere.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from npaflow.presets import FROZEN

DOCKER_HUB = "docker.io"
#: Where Docker Hub's registry API answers (the name `docker.io` has no API).
DOCKER_HUB_API = "registry-1.docker.io"
DEFAULT_TAG = "latest"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*\Z")
_HOST = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*|\[[0-9a-fA-F:]+\])(?::\d+)?$"
)
_TAG = re.compile(r"^[\w][\w.-]{0,127}\Z")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")  # \Z: "$" would let a final newline in
_LOOPBACK = ("localhost", "127.", "[::1]")


class ImageReferenceError(ValueError):
    """Text that is not a container image reference."""


class ImageReference(BaseModel):
    """One parsed image reference; `digest` set means the content is pinned."""

    model_config = FROZEN

    registry: str = DOCKER_HUB
    repository: str
    tag: str = ""
    digest: str = ""

    @property
    def api_host(self) -> str:
        """The host:port whose `/v2/` API serves this repository."""
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def is_loopback(self) -> bool:
        """A registry on this machine, which Docker reaches over plain HTTP."""
        return self.registry.startswith(_LOOPBACK)

    @property
    def reference(self) -> str:
        """What the manifest endpoint is asked for: the digest if pinned, else the tag."""
        return self.digest or self.tag or DEFAULT_TAG

    @property
    def name(self) -> str:
        """`registry/repository` as written without a tag or digest (Docker Hub's short form kept)."""
        if self.registry != DOCKER_HUB:
            return f"{self.registry}/{self.repository}"
        return self.repository.removeprefix("library/")

    def pinned(self, digest: str) -> str:
        """The reference that names exactly `digest`: `name@sha256:...`."""
        return f"{self.name}@{digest}"


def parse_image(text: str) -> ImageReference:
    """Parse a Docker image reference.

    Raises:
        ImageReferenceError: `text` is not one, with what is wrong.
    """
    rest = text.strip()
    if not rest or rest != text or any(c.isspace() for c in rest):
        raise ImageReferenceError(f"image {text!r} is empty or has spaces: write 'ghcr.io/team/train:v1'")
    rest, _, digest = rest.partition("@")
    if digest and not DIGEST.match(digest):
        raise ImageReferenceError(f"image {text!r}: the digest must be 'sha256:' and 64 lowercase hex digits")
    registry, path = _split_registry(rest)
    path, tagged, tag = _split_tag(path)
    if tagged and not _TAG.match(tag):
        raise ImageReferenceError(f"image {text!r}: tag {tag!r} is not a valid tag (letters, digits, '_.-')")
    if not _NAME.match(path):
        raise ImageReferenceError(
            f"image {text!r}: repository {path!r} must be lowercase components "
            "(letters, digits, '._-') separated by '/'"
        )
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    return ImageReference(registry=registry, repository=path, tag=tag, digest=digest)


def _split_registry(text: str) -> tuple[str, str]:
    first, slash, rest = text.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        if not _HOST.match(first):
            raise ImageReferenceError(f"image {text!r}: registry {first!r} is not a host[:port]")
        return first, rest
    return DOCKER_HUB, text


def _split_tag(path: str) -> tuple[str, bool, str]:
    """(repository, whether a `:` names a tag, the tag)."""
    slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > slash:
        return path[:colon], True, path[colon + 1 :]
    return path, False, ""


def image_problem(text: str) -> str:
    """Why `text` is not an image reference ("" when it is)."""
    try:
        parse_image(text)
    except ImageReferenceError as exc:
        return str(exc)
    return ""
