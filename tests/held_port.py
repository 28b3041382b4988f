"""A fixed loopback port in front of a server that is stopped and started again.

A test that stops a server for minutes and restarts it "on the same endpoint"
cannot restart it on the same ports: a parallel test may take one of them
meanwhile (SeaweedFS alone needs eight). `HeldPort` owns the endpoint the
workers use and forwards each connection to wherever the server listens now.
While the door is shut it keeps the port bound but not listening, so a client
gets "connection refused" exactly as from a stopped server, and nobody else can
take the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable

from tests.socket_bridge import join_streams


def _bound_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


class HeldPort:
    """Forwards 127.0.0.1:port to `upstream()`; `shut()` refuses connections, `open()` resumes."""

    def __init__(self, upstream: Callable[[], tuple[str, int]]) -> None:
        self._upstream = upstream
        self._reserve: socket.socket | None = _bound_socket(0)
        self.port: int = self._reserve.getsockname()[1]
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def open(self) -> None:
        """Listen on the held port again (the reserve is let go and the port re-bound at once)."""
        if self._reserve is not None:
            self._reserve.close()
            self._reserve = None
        listener = _bound_socket(self.port)
        self._server = await asyncio.start_server(self._forward, sock=listener)

    async def shut(self) -> None:
        """Stop listening, drop every open connection, keep the port bound."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._open):
            with contextlib.suppress(OSError):
                writer.close()
        self._reserve = _bound_socket(self.port)

    async def close(self) -> None:
        await self.shut()
        if self._reserve is not None:
            self._reserve.close()
            self._reserve = None

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        host, port = self._upstream()
        try:
            upstream = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        self._open.update((writer, upstream[1]))
        try:
            await join_streams((reader, writer), upstream)
        finally:
            self._open.difference_update((writer, upstream[1]))
