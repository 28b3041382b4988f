"""A loopback proxy in front of the S3 test server that can answer every request 503 (an outage).

Connections made while `failing` is set are answered `503 ServiceUnavailable` (S3's
own error document) and closed; the others are forwarded byte for byte. npaflow's
S3 storage opens a client per call, so flipping `failing` takes effect at the next call.
"""

from __future__ import annotations

import asyncio
import contextlib

from tests.socket_bridge import join_streams

_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code>'
    b"<Message>Service is unable to handle request.</Message></Error>"
)
_REPLY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\nConnection: close\r\n"
    b"Content-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


class S3Outage:
    """Listens on a free loopback port; forwards to `upstream` unless `failing`."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.failing = False
        self.refused = 0  # requests answered 503
        self._server: asyncio.Server | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> S3Outage:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.failing:
            await self._refuse(reader, writer)
            return
        try:
            upstream = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        await join_streams((reader, writer), upstream)

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            if length:
                await reader.readexactly(length)
            self.refused += 1
            writer.write(_REPLY)
            await writer.drain()
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()
