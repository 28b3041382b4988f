"""Headless Chromium for the pages npaflow serves or writes: DOM dumps, screenshots, requests made."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.helpers import require_tool

#: Chromium's own calls home (updates, clock, accounts, dictionaries), made whatever the page is.
BROWSER_OWN = (
    "http://update.googleapis.com/service/update2/",
    "https://update.googleapis.com/service/update2/",
    "http://clients2.google.com/time/",
    "https://accounts.google.com/ListAccounts",
    "https://redirector.gvt1.com/edgedl/chrome/dict/",
)
QUIET = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
)


async def chromium(*args: str) -> str:
    """Run headless Chromium (virtual time lets a page settle) and return stdout."""
    process = await asyncio.create_subprocess_exec(
        require_tool("chromium", "chromium-browser", package="chromium"),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--virtual-time-budget=20000",
        *QUIET,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return out.decode(errors="replace")


def requested_urls(net_log: Path) -> set[str]:
    """Every URL a Chromium `--log-net-log` file shows a request for."""
    try:
        log = json.loads(net_log.read_text())
    except json.JSONDecodeError:  # a log cut short at exit still lists its events line by line
        log = {"events": []}
        for line in net_log.read_text().splitlines():
            try:
                log["events"].append(json.loads(line.rstrip(",")))
            except json.JSONDecodeError:
                continue
    urls = set()
    for event in log.get("events", []):
        params = event.get("params") or {}
        for key in ("url", "original_url", "new_url"):
            if isinstance(params.get(key), str):
                urls.add(params[key])
    return urls


def page_requests(net_log: Path) -> set[str]:
    """The http(s) requests a page made (Chromium's own calls home left out)."""
    return {
        url
        for url in requested_urls(net_log)
        if url.startswith(("http://", "https://")) and not url.startswith(BROWSER_OWN)
    }
