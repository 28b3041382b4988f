"""What every answer of `npaflow ui` tells the browser it may do: run our one script, load nothing.

The pages escape every name, decision and log line they show; the policy is the
second wall. If some text ever slipped through as markup, the browser still runs
no script but the page's own (pinned by its hash), loads nothing from anywhere,
sends no referrer (a run id or filter in a URL stays here) and lets no other
site frame the page.
"""

from __future__ import annotations

import base64
import hashlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def script_source(script: str) -> str:
    """The CSP source that allows exactly this inline script (`'sha256-…'`)."""
    digest = hashlib.sha256(script.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_policy(*scripts: str) -> str:
    """The Content-Security-Policy of a page whose only scripts are `scripts` (their bodies)."""
    allowed = " ".join(script_source(script) for script in scripts) or "'none'"
    return (
        "default-src 'none'; "
        f"script-src {allowed}; "
        "connect-src 'self'; "
        "style-src 'unsafe-inline'; "
        "img-src 'self' data:; "
        "form-action 'self'; "
        "base-uri 'none'; "
        "frame-ancestors 'none'"
    )


def security_headers(*scripts: str) -> list[tuple[bytes, bytes]]:
    """The headers every answer carries (raw, as ASGI sends them)."""
    return [
        (b"content-security-policy", content_policy(*scripts).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"x-frame-options", b"DENY"),
    ]


class SecurityHeaders:
    """ASGI middleware: adds `security_headers` to every HTTP answer, errors and redirects too."""

    def __init__(self, app: ASGIApp, headers: list[tuple[bytes, bytes]]) -> None:
        self.app = app
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to the answer's start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
