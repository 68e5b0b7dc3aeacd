"""The MCP server over streamable HTTP at /memories/mcp, on the LangGraph server or alone."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from webapp.guard import ApiError, check_local_host, check_same_origin, resolve_caller
from webapp.mcp.doors import HttpDoor
from webapp.mcp.server import build_server

MCP_PATH = "/memories/mcp"
Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]


class CallerGuard:
    """Refuse, before MCP reads a byte, what the editor refuses: a foreign host under
    `langgraph dev` (DNS rebinding), a request another web site's page made, and a caller
    with no user (401 with custom auth). Its own checks replace the SDK's host check, which
    knows only loopback names and would refuse a deployment's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            try:
                check_local_host(request)
                check_same_origin(request)
                resolve_caller(request)
            except ApiError as refused:
                await refused.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


def mcp_routes(threads_file: Path | None = None) -> tuple[list[BaseRoute], Lifespan]:
    """The endpoint's route and the lifespan that runs its sessions. Stateless, with JSON
    answers: any replica answers any call, none keeps a session."""
    server = build_server(HttpDoor(threads_file))
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    endpoint = next(r for r in app.routes if isinstance(r, Route) and r.path == MCP_PATH)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    route = Route(MCP_PATH, endpoint=CallerGuard(endpoint.app), methods=["GET", "POST", "DELETE"])
    return [route], lifespan
