"""A registry's answers cannot exhaust the preflight's memory or draw credentials into the clear."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import pytest

from npaflow.cli.images.registry import MAX_MANIFEST_BYTES, RegistryClient, realm_downgrade
from npaflow.images import ImageStatus
from npaflow.images.reference import parse_image

pytestmark = pytest.mark.integration


class _EndlessManifest(BaseHTTPRequestHandler):
    """Serves an 'image manifest' with no digest header, far larger than any manifest is."""

    def do_HEAD(self) -> None:
        self._headers()

    def do_GET(self) -> None:
        self._headers()
        chunk = b" " * 65536
        try:
            for _ in range(MAX_MANIFEST_BYTES // len(chunk) * 4):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading, as it should

    def _headers(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


class _RedirectLoop(BaseHTTPRequestHandler):
    """Sends every manifest request back to itself."""

    def do_HEAD(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.path)
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def looping_registry() -> Iterator[str]:
    yield from _serving(_RedirectLoop)


@pytest.fixture
def endless_registry() -> Iterator[str]:
    yield from _serving(_EndlessManifest)


def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_manifest_past_four_mib_is_unavailable_not_read_to_the_end(endless_registry: str) -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        answer = await RegistryClient(session).resolve(parse_image(f"{endless_registry}/big/image:v1"), None)
    assert answer.status is ImageStatus.UNAVAILABLE and not answer.digest
    assert "answer too large" in answer.detail and "sent more than 4 MiB" in answer.detail
    assert "unreachable" not in answer.detail


@pytest.mark.parametrize(
    ("registry", "realm", "downgrade"),
    [
        ("https://ghcr.io/v2/x/manifests/v1", "http://ghcr.io/token", True),
        ("https://ghcr.io/v2/x/manifests/v1", "https://auth.example/token", False),
        ("http://127.0.0.1:5000/v2/x/manifests/v1", "http://127.0.0.1:5001/token", False),
    ],
)
def test_an_https_registry_may_not_send_the_token_request_over_plain_http(
    registry: str, realm: str, downgrade: bool
) -> None:
    assert realm_downgrade(registry, realm) is downgrade


async def resolved_detail(image: str) -> str:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        answer = await RegistryClient(session).resolve(parse_image(image), None)
    assert answer.status is ImageStatus.UNAVAILABLE and not answer.digest
    return answer.detail


async def test_a_registry_that_redirects_forever_is_called_a_redirect_loop(looping_registry: str) -> None:
    detail = await resolved_detail(f"{looping_registry}/loop/image:v1")
    assert "redirect loop" in detail and "check its address" in detail and "unreachable" not in detail


async def test_a_registry_port_nobody_listens_on_is_called_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    detail = await resolved_detail(f"127.0.0.1:{port}/none/image:v1")
    assert "refused the connection" in detail and "is it running" in detail
