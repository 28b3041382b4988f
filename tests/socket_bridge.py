"""Forward connections between a TCP port and a Unix socket (standard library only).

Used to reach a SkyPilot API server that runs in a network namespace of its
own (where it can have the fixed port 46580 its controller insists on) from the
host's loopback on a free port: `tcp-to-unix` listens on the host, `unix-to-tcp`
runs inside the namespace. Usage:
    python tests/socket_bridge.py tcp-to-unix HOST PORT SOCKET
    python tests/socket_bridge.py unix-to-tcp SOCKET HOST PORT
"""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()


async def join_streams(
    client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    await asyncio.gather(_pipe(client[0], upstream[1]), _pipe(upstream[0], client[1]))


async def tcp_to_unix(host: str, port: int, path: str) -> None:
    """Accept TCP connections and forward each to the Unix socket."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream = await asyncio.open_unix_connection(path)
        except OSError:
            writer.close()
            return
        await join_streams((reader, writer), upstream)

    server = await asyncio.start_server(handle, host, port)
    async with server:
        await server.serve_forever()


async def unix_to_tcp(path: str, host: str, port: int) -> None:
    """Accept Unix-socket connections and forward each to the TCP address."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        await join_streams((reader, writer), upstream)

    server = await asyncio.start_unix_server(handle, path)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "tcp-to-unix":
        asyncio.run(tcp_to_unix(args[0], int(args[1]), args[2]))
    elif mode == "unix-to-tcp":
        asyncio.run(unix_to_tcp(args[0], args[1], int(args[2])))
    else:
        sys.exit(f"unknown mode {mode!r}")
