"""A small standard-library process that forks local job supervisors on request (a zygote).

Starting a Python interpreter for every job costs tens of milliseconds of CPU;
forking this already-warm process costs about one. The worker starts one
spawner per home, detached (it outlives the worker, and so do the supervisors
it forks: each calls setsid and runs `supervisor.supervise`). Protocol:
one JSON line per connection, `{"job_dir": ..., "env": {...}}`, answered with
`{"pid": N}` or `{"error": ...}`. It stays single-threaded (forking is safe),
reaps nothing (SIGCHLD ignored), and exits after IDLE_SECONDS without a request or
once the worker that started it is gone (the supervisors it forked carry on; a new
worker starts its own spawner).
Usage: python -S -E spawner.py SOCKET
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import supervisor

#: A spawner nobody asked for anything this long exits (the next launch starts another).
IDLE_SECONDS = 60.0
#: How often it checks that the worker that started it is still alive.
PARENT_CHECK_SECONDS = 1.0


def _become_supervisor(job_dir: str, env: dict[str, str]) -> None:
    """In the forked child: a session of its own, the job's environment, then supervise."""
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the supervisor waits on its tasks
        log = os.open(os.path.join(job_dir, "supervisor.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(job_dir)
        code = supervisor.supervise(job_dir)
    except BaseException:  # noqa: BLE001 - a forked child must never return into the server loop
        code = 1
    os._exit(code)


def _serve_one(connection: socket.socket, server: socket.socket) -> None:
    with connection, connection.makefile("rwb") as stream:
        try:
            request = json.loads(stream.readline())
            job_dir, env = str(request["job_dir"]), {str(k): str(v) for k, v in request["env"].items()}
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            stream.write(json.dumps({"error": f"bad request: {exc}"}).encode() + b"\n")
            return
        pid = os.fork()
        if pid == 0:
            server.close()
            connection.close()
            _become_supervisor(job_dir, env)
        stream.write(json.dumps({"pid": pid}).encode() + b"\n")


def serve(path: str) -> int:
    """Answer spawn requests on the Unix socket at `path` until idle."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked supervisors are reaped by the kernel
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = f"{path}.{os.getpid()}"
    server.bind(temporary)
    server.listen(64)
    inode = os.stat(temporary).st_ino
    os.replace(temporary, path)  # appears only once it accepts
    server.settimeout(PARENT_CHECK_SECONDS)
    parent, last_request = os.getppid(), time.monotonic()
    try:
        while True:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                if os.getppid() != parent or time.monotonic() - last_request > IDLE_SECONDS:
                    return 0
                continue
            last_request = time.monotonic()
            connection.settimeout(10)
            try:
                _serve_one(connection, server)
            except OSError:
                continue
    finally:
        if os.path.exists(path) and os.stat(path).st_ino == inode:
            os.unlink(path)  # a newer spawner may own the path by now: leave its socket alone
        server.close()


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
