"""`npaflow dev` says, while its Temporal server starts, that one is on the way.

A command that cannot connect reports it in under 3 s, unless `npaflow dev` is
starting a server on that very port (a marker file with its live pid): then it
waits for the server, as the README's first command needs (`npaflow dev &`
then `npaflow submit` at once).
"""

from __future__ import annotations

import os
from pathlib import Path

from npaflow.integers import plain_int
from npaflow.runtime.environment import ENV_DEFAULTS, EnvVar

#: How long a command waits for a server that `npaflow dev` is starting.
DEV_START_PATIENCE_SECONDS = 60.0
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]"}


def _marker(port: int) -> Path:
    home = os.environ.get(EnvVar.HOME.value) or ENV_DEFAULTS[EnvVar.HOME]
    return Path(home).expanduser() / f"dev-server-starting-{port}"


def mark_dev_server_starting(port: int) -> Path:
    """Mark a dev server on `port` as starting; the caller removes the file once it listens."""
    path = _marker(port)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(os.getpid()), encoding="utf-8")
    return path


def dev_server_is_starting(address: str) -> bool:
    """True when a live `npaflow dev` is starting the local server at `address`."""
    host, _, port = address.rpartition(":")
    number = plain_int(port)
    if host not in _LOCAL_HOSTS or number is None:
        return False
    try:
        pid = int(_marker(number).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
