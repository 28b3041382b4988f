"""The ASGI app of `npaflow ui` (Starlette): read-only pages over one Temporal client.

Routes: `/` (runs), `/runs/{id}` (a run's page), `/runs/{id}/live` (its fresh
sections, JSON), `/runs/{id}/logs?state=` (its jobs' logs, read by the same
path as `npaflow logs`), `/healthz`. With a token, every request must carry it:
`Authorization: Bearer TOKEN`, or `?token=TOKEN` once (kept in a cookie). Every
answer carries the browser policy of npaflow/cli/ui/policy.py.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from urllib.parse import quote

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from temporalio.service import RPCError

from npaflow.cli.list_handler import LISTED_PHASES
from npaflow.cli.logs_handler import logs_text, read_logs
from npaflow.cli.ui.pages import LIVE_SCRIPT, live_payload, message_page, run_page, runs_page, temporal_link
from npaflow.cli.ui.policy import SecurityHeaders, security_headers
from npaflow.cli.ui.reads import RunReads
from npaflow.errors import UsageError
from npaflow.integers import plain_int
from npaflow.picture.report import ReportLinks
from npaflow.temporal.errors import rpc_error_text, unreadable_answer_text

COOKIE = "npaflow_ui_token"
#: Runs read for the list: enough for a few pages, bounded for a server with thousands.
LIST_LIMIT = 500


@dataclass(frozen=True)
class UiSettings:
    """What the app needs besides the client."""

    namespace: str
    temporal_ui: str = ""  # the Temporal UI's base URL, for each run's link
    token: str = ""  # required of every request when set
    tail_lines: int = 200


class TokenCheck(BaseHTTPMiddleware):
    """Every request carries the token (header, cookie, or `?token=` which sets the cookie)."""

    def __init__(self, app: object, token: str) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.token = token

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        """Refuse a request without the token (401), except the health check."""
        if not self.token or request.url.path == "/healthz":
            return await call_next(request)
        given = request.query_params.get("token", "")
        if given and hmac.compare_digest(given, self.token):
            response = RedirectResponse(request.url.remove_query_params("token"), status_code=303)
            response.set_cookie(COOKIE, given, httponly=True, samesite="strict")
            return response
        header = request.headers.get("authorization", "")
        offered = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        offered = offered or request.cookies.get(COOKIE, "")
        if offered and hmac.compare_digest(offered, self.token):
            return await call_next(request)
        return PlainTextResponse("npaflow ui: this server needs its token (Authorization: Bearer)", 401)


def _filter_problem(phase: str, spec: str) -> str:
    """Why the runs list cannot be filtered so ("" when it can)."""
    if phase and phase not in LISTED_PHASES:
        return f"phase {phase!r} is not a phase"
    if "\x00" in spec:
        return "a spec name has no NUL character"
    return ""


def ui_app(reads: RunReads, settings: UiSettings) -> Starlette:
    """The app; `reads` holds the Temporal client."""

    def links(run_id: str) -> ReportLinks:
        return ReportLinks(
            temporal_ui=temporal_link(settings.temporal_ui, settings.namespace, run_id),
            logs=f"/runs/{quote(run_id)}/logs?state={{state}}",
        )

    async def runs(request: Request) -> Response:
        phase = request.query_params.get("phase", "")
        spec = request.query_params.get("spec", "")
        page = request.query_params.get("page", "0")
        if problem := _filter_problem(phase, spec):
            return HTMLResponse(message_page("Bad filter", problem), 400)
        number = plain_int(page)
        if number is None:
            return HTMLResponse(message_page("Bad page", f"page {page!r} is not a number"), 400)
        rows = await reads.runs(phase, spec, LIST_LIMIT)
        return HTMLResponse(runs_page(rows, phase, spec, number))

    async def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            shot = await reads.snapshot(run_id)
        except UsageError as error:
            return HTMLResponse(message_page("No such run", str(error)), 404)
        return HTMLResponse(run_page(shot, links(run_id)))

    async def live(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            shot = await reads.snapshot(run_id)
        except UsageError as error:
            return JSONResponse({"error": str(error)}, 404)
        return JSONResponse(live_payload(shot, links(run_id)))

    async def logs(request: Request) -> Response:
        run_id, state = request.path_params["run_id"], request.query_params.get("state", "")
        try:
            found = await read_logs(reads.client, run_id, state, settings.tail_lines)
        except UsageError as error:
            return PlainTextResponse(str(error), 404)
        return PlainTextResponse(logs_text(run_id, state, found))

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/", runs),
        Route("/healthz", health),
        Route("/runs/{run_id:path}/live", live),
        Route("/runs/{run_id:path}/logs", logs),
        Route("/runs/{run_id:path}", run),
    ]
    return Starlette(
        routes=routes,
        middleware=_middleware(settings.token),
        exception_handlers={RPCError: _server_refused, ValidationError: _unreadable},
    )


def _middleware(token: str) -> list[Middleware]:
    """The browser policy on every answer (refusals too), then the token check."""
    return [
        Middleware(SecurityHeaders, headers=security_headers(LIVE_SCRIPT)),
        Middleware(TokenCheck, token=token),
    ]


async def _server_refused(request: Request, error: Exception) -> Response:
    """A request the Temporal server refused (the handler of RPCError): one line saying why, not a 500."""
    assert isinstance(error, RPCError)
    return _bad_gateway(request, "Temporal refused the read", rpc_error_text(error))


async def _unreadable(request: Request, error: Exception) -> Response:
    """An answer in a shape this npaflow cannot read (workers of another version): said, not a 500."""
    assert isinstance(error, ValidationError)
    return _bad_gateway(request, "The answer could not be read", unreadable_answer_text(error))


def _bad_gateway(request: Request, title: str, text: str) -> Response:
    """What went wrong upstream, as the page (or the live updates' JSON) the reader asked for."""
    if request.url.path.endswith("/live"):
        return JSONResponse({"error": text}, 502)
    return HTMLResponse(message_page(title, text), 502)
