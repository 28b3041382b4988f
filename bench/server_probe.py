"""Which process is the dev server, and the RPCs its frontend answered (by operation).

compare_bench splits npaflow's cost per wave into worker, dev server and the rest
(jobs, this bench) with these, so a gap to the floor is seen where it is.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_REQUESTS = re.compile(r"^service_requests\{(?P<labels>[^}]*)\} (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dev_server_pid() -> int:
    """This process's child that is the Temporal dev server (started by start_dev_server)."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
        if name.startswith("temporal") and int(fields[1]) == me:
            return int(entry.name)
    raise RuntimeError("no Temporal dev server among this process's children")


@dataclass(frozen=True)
class ServerProbe:
    """One dev server: its pid (for its CPU in /proc) and its metrics port (for its RPC counts)."""

    pid: int
    metrics_port: int

    def rpcs(self) -> Counter[str]:
        """The RPCs its frontend has answered so far, by operation."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
        counts: Counter[str] = Counter()
        for line in text.splitlines():
            match = _REQUESTS.match(line)
            if match is None:
                continue
            labels = dict(_LABEL.findall(match["labels"]))
            if labels.get("service_name", "frontend") == "frontend":
                counts[labels.get("operation", "?")] += int(float(match["value"]))
        return counts
