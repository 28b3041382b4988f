"""Resolve one image to a digest through the OCI distribution API (manifest HEAD, then GET).

Accepts the OCI index and manifest and the Docker v2 list and manifest media
types, so a multi-arch image resolves to its index digest. Answers a 401 with
the registry's challenge: a bearer token from its realm (with basic auth when
credentials exist) or basic auth itself. Fail closed: only a manifest the
registry served with a digest is `ok`; an answer that proves nothing
(a 404 without a registry error code, a 5xx, a timeout) is `unavailable`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field

import aiohttp

from npaflow.cli.images.credentials import Credentials
from npaflow.images import DIGEST, ImageReference, ImageStatus

MANIFEST_TYPES = frozenset(
    {
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    }
)
_ACCEPT = ", ".join(sorted(MANIFEST_TYPES))
#: Error codes with which a registry says the repository or the reference does not exist.
_MISSING_CODES = frozenset({"MANIFEST_UNKNOWN", "NAME_UNKNOWN", "NOT_FOUND"})
_CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')
#: The largest manifest npaflow reads: what the OCI distribution spec asks registries to accept.
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
#: The largest token answer npaflow reads (a JWT is a few KiB).
MAX_TOKEN_BYTES = 1024 * 1024
INSECURE_ENV = "NPAFLOW_INSECURE_REGISTRIES"


@dataclass(frozen=True)
class Resolution:
    """One image's answer from its registry (before the report adds the states that use it)."""

    status: ImageStatus
    digest: str = ""
    detail: str = ""


@dataclass
class _Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def registry_scheme(image: ImageReference) -> str:
    """`http` for a loopback registry or one listed in NPAFLOW_INSECURE_REGISTRIES, else `https`."""
    insecure = {h.strip() for h in os.environ.get(INSECURE_ENV, "").split(",") if h.strip()}
    return "http" if image.is_loopback or image.registry in insecure else "https"


class RegistryClient:
    """Asks registries for manifests, one aiohttp session for every image of a preflight."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def resolve(self, image: ImageReference, credentials: Credentials | None) -> Resolution:
        """The image's digest, or why there is none (never raises for a registry's answer)."""
        try:
            return await _Lookup(self.session, image, credentials).run()
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            return Resolution(ImageStatus.UNAVAILABLE, detail=failure_words(image.registry, exc))


class _Lookup:
    """One image's manifest request, with the authorization its registry's challenge asks for."""

    def __init__(
        self, session: aiohttp.ClientSession, image: ImageReference, credentials: Credentials | None
    ) -> None:
        self.session, self.image, self.credentials = session, image, credentials
        self.url = (
            f"{registry_scheme(image)}://{image.api_host}/v2/{image.repository}/manifests/{image.reference}"
        )
        self.authorization = ""

    async def run(self) -> Resolution:
        reply = await self._ask("HEAD")
        if reply.status == 401:
            refused = await self._authorize(reply.headers.get("WWW-Authenticate", ""))
            if refused is not None:
                return refused
            reply = await self._ask("HEAD")
        if reply.status == 200:
            return await self._served(reply)
        if reply.status == 404:
            return self._missing(await self._ask("GET"))
        if reply.status in (401, 403):
            return self._refused(reply.status)
        return Resolution(
            ImageStatus.UNAVAILABLE, detail=f"registry {self.image.registry} answered {reply.status}"
        )

    async def _ask(self, method: str) -> _Reply:
        headers = {"Accept": _ACCEPT}
        if self.authorization:
            headers["Authorization"] = self.authorization
        async with self.session.request(method, self.url, headers=headers) as response:
            body = await _bounded(response, MAX_MANIFEST_BYTES) if method == "GET" else b""
            return _Reply(response.status, dict(response.headers), body)

    async def _served(self, reply: _Reply) -> Resolution:
        media = reply.headers.get("Content-Type", "").split(";")[0].strip()
        digest = reply.headers.get("Docker-Content-Digest", "")
        if not digest or media not in MANIFEST_TYPES:
            reply = await self._ask("GET")
            media = reply.headers.get("Content-Type", "").split(";")[0].strip()
            if reply.status != 200:
                return Resolution(ImageStatus.UNAVAILABLE, detail=f"manifest GET answered {reply.status}")
            digest = "sha256:" + hashlib.sha256(reply.body).hexdigest()
        if media not in MANIFEST_TYPES:
            detail = (
                f"registry {self.image.registry} served {media or 'no content type'}, not an image manifest"
            )
            return Resolution(ImageStatus.UNAVAILABLE, detail=detail)
        if not DIGEST.match(digest) or (self.image.digest and digest != self.image.digest):
            detail = f"registry answered digest {digest!r} for {self.image.reference}"
            return Resolution(ImageStatus.UNAVAILABLE, detail=detail)
        return Resolution(ImageStatus.OK, digest=digest)

    def _missing(self, reply: _Reply) -> Resolution:
        codes = _error_codes(reply.body)
        if reply.status == 404 and codes & _MISSING_CODES:
            image = self.image
            what = "repository" if "NAME_UNKNOWN" in codes else f"{image.reference!r}"
            detail = f"registry {image.registry} has no {what} in {image.repository}"
            return Resolution(ImageStatus.NOT_FOUND, detail=detail)
        detail = (
            f"registry {self.image.registry} answered {reply.status} without a registry error code "
            f"({', '.join(sorted(codes)) or 'no code'}): is it a container registry?"
        )
        return Resolution(ImageStatus.UNAVAILABLE, detail=detail)

    def _refused(self, status: int) -> Resolution:
        host = self.image.registry
        if self.credentials is None:
            detail = (
                f"registry {host} refused an anonymous pull ({status}) and no credentials for {host} are set"
            )
        else:
            detail = f"registry {host} refused the credentials from {self.credentials.source} ({status})"
        return Resolution(ImageStatus.FORBIDDEN, detail=detail)

    async def _authorize(self, challenge: str) -> Resolution | None:
        """Answer the challenge; a Resolution when the registry's answer settles the image."""
        scheme, _, rest = challenge.strip().partition(" ")
        params = dict(_CHALLENGE_PARAM.findall(rest))
        basic = (
            aiohttp.BasicAuth(self.credentials.username, self.credentials.secret)
            if self.credentials
            else None
        )
        if scheme.lower() == "basic":
            if basic is None:
                return self._refused(401)
            self.authorization = basic.encode()
            return None
        if scheme.lower() != "bearer" or "realm" not in params:
            asked = scheme or "no"
            detail = (
                f"registry {self.image.registry} asked for {asked} authorization, which npaflow cannot give"
            )
            return Resolution(ImageStatus.UNAVAILABLE, detail=detail)
        if realm_downgrade(self.url, params["realm"]):
            detail = (
                f"registry {self.image.registry} sent npaflow for a token to {params['realm']}, which is "
                "not https: npaflow sends no credentials and trusts no token in the clear"
            )
            return Resolution(ImageStatus.UNAVAILABLE, detail=detail)
        query = {"scope": params.get("scope") or f"repository:{self.image.repository}:pull"}
        if params.get("service"):
            query["service"] = params["service"]
        async with self.session.get(params["realm"], params=query, auth=basic) as response:
            if response.status in (401, 403):
                return self._refused(response.status)
            if response.status != 200:
                detail = f"token service {params['realm']} answered {response.status}"
                return Resolution(ImageStatus.UNAVAILABLE, detail=detail)
            answer = json.loads(await _bounded(response, MAX_TOKEN_BYTES))
        token = answer.get("token") or answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            return Resolution(
                ImageStatus.UNAVAILABLE, detail=f"token service {params['realm']} gave no token"
            )
        self.authorization = f"Bearer {token}"
        return None


class AnswerTooLargeError(ValueError):
    """A registry's answer past the bound: larger than any manifest or token."""


def failure_words(registry: str, exc: BaseException) -> str:
    """Why a registry gave no answer, by what happened, with what to check."""
    if isinstance(exc, AnswerTooLargeError):
        return f"registry {registry} answer too large ({exc}; a manifest is a few KiB): is it a registry?"
    if isinstance(exc, aiohttp.TooManyRedirects):
        return f"registry {registry} redirect loop (its answers redirect again and again): check its address"
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return f"registry {registry} timed out: it is slow or out of reach; try again, or check the network"
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, ConnectionRefusedError):
        return f"registry {registry} refused the connection: is it running on that host and port?"
    what = type(exc).__name__ if not str(exc) else f"{type(exc).__name__}: {exc}"
    return f"registry {registry} unreachable ({what[:300]})"


def realm_downgrade(registry_url: str, realm: str) -> bool:
    """True when an https registry names a token service that is not https."""
    return registry_url.startswith("https://") and not realm.lower().startswith("https://")


async def _bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, refused past `limit` bytes however much the server sends.

    Raises:
        ValueError: the body is longer than `limit` (an answer that proves nothing).
    """
    body = bytearray()
    async for chunk in response.content.iter_chunked(64 * 1024):
        body += chunk
        if len(body) > limit:
            raise AnswerTooLargeError(f"{response.url} sent more than {limit / 1024 / 1024:g} MiB")
    return bytes(body)


def _error_codes(body: bytes) -> set[str]:
    try:
        errors = json.loads(body).get("errors", [])
        return {str(e.get("code", "")) for e in errors if isinstance(e, dict)}
    except (ValueError, AttributeError):
        return set()
