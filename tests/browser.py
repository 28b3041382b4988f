"""Headless Chromium for the pages npaflow serves or writes: DOM dumps, screenshots, requests made."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.helpers import free_port, require_tool

#: Chromium's own calls home (updates, clock, accounts, dictionaries), made whatever the page is.
BROWSER_OWN = (
    "http://update.googleapis.com/service/update2/",
    "https://update.googleapis.com/service/update2/",
    "http://clients2.google.com/time/",
    "https://accounts.google.com/ListAccounts",
    "https://redirector.gvt1.com/edgedl/chrome/dict/",
    "https://www.google.com/async/",  # the browser's own start-page feed (`folae`), seen once in CI
)
QUIET = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
)


def headless() -> list[str]:
    """Chromium without a screen, a sandbox, a GPU, or calls home (as far as flags stop them)."""
    chromium_path = require_tool("chromium", "chromium-browser", package="chromium")
    return [
        chromium_path,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        *QUIET,
    ]


async def chromium(*args: str) -> str:
    """Run headless Chromium (virtual time lets a page settle) and return stdout."""
    process = await asyncio.create_subprocess_exec(
        *headless(),
        "--virtual-time-budget=20000",
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


class BrowserPage:
    """One tab of a headless Chromium, driven over the DevTools protocol (aiohttp's websocket).

    Every request the page makes is kept in `requests`, so a test can say none left the machine.
    """

    def __init__(self, process: asyncio.subprocess.Process, port: int, profile: Path) -> None:
        self.process, self.port, self.profile = process, port, profile
        self.requests: list[str] = []
        self._ids = 0
        self._socket: Any = None
        self._session: Any = None
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, profile: Path) -> BrowserPage:
        """Start Chromium with a blank tab and attach to it."""
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            *headless(),
            f"--remote-debugging-port={port}",
            f"--user-data-dir={profile}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        page = cls(process, port, profile)
        await page._attach()
        return page

    async def _attach(self) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession()
        for _ in range(100):
            try:
                async with self._session.get(f"http://127.0.0.1:{self.port}/json/list") as answer:
                    targets = [t for t in await answer.json() if t.get("type") == "page"]
                if targets:
                    break
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError("Chromium's DevTools endpoint never came up")
        self._socket = await self._session.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.ensure_future(self._read())
        await self.call("Network.enable")
        await self.call("Page.enable")

    async def _read(self) -> None:
        async for message in self._socket:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self._answers:
                self._answers.pop(data["id"]).set_result(data)
            elif data.get("method") == "Network.requestWillBeSent":
                self.requests.append(data["params"]["request"]["url"])

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; its result."""
        self._ids += 1
        answer = self._answers[self._ids] = asyncio.get_running_loop().create_future()
        await self._socket.send_json({"id": self._ids, "method": method, "params": params})
        data = await asyncio.wait_for(answer, 30)
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        return dict(data.get("result", {}))

    async def goto(self, url: str) -> None:
        """Load `url` and wait for it to finish loading."""
        await self.call("Page.navigate", url=url)
        await self.until("document.readyState === 'complete'")

    async def value(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def until(self, expression: str, timeout: float = 30.0) -> Any:
        """Wait until the expression is truthy in the page; its value."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.value(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"never true in the page: {expression}")
            await asyncio.sleep(0.2)

    async def screenshot(self, path: Path) -> None:
        """A PNG of the whole page."""
        await self.call(
            "Emulation.setDeviceMetricsOverride", width=1400, height=1000, deviceScaleFactor=1, mobile=False
        )
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def off_machine(self) -> list[str]:
        """Requests the page made to anywhere but this machine."""
        return [
            url
            for url in self.requests
            if url.startswith(("http://", "https://", "ws://", "wss://"))
            and urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1")
            and not url.startswith(BROWSER_OWN)
        ]

    async def close(self) -> None:
        """Close the tab and stop Chromium."""
        if self._reader is not None:
            self._reader.cancel()
        if self._socket is not None:
            await self._socket.close()
        if self._session is not None:
            await self._session.close()
        if self.process.returncode is None:
            self.process.terminate()
            await self.process.wait()
