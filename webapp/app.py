"""The memory editor as a Starlette app: the page and its JSON API under /memories/.

Mounted on the LangGraph server by langgraph.json (`"http": {"app": "./webapp/app.py:app"}`) and
runnable on its own with `python -m webapp`. Its one middleware, `NoCorsForEditor`, acts on the
editor's own paths only (under the server, an app's middleware wraps every LangGraph route too);
it adds no exception handlers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.integration import get_settings
from webapp import routes
from webapp.consolidate import consolidate  # feature: consolidation
from webapp.conversations import search_conversations, unless_archive_off  # feature: archive
from webapp.guard import ApiError, check_local_host
from webapp.profile import get_profile, put_profile

PREFIX = "/memories"
STATIC_DIR = Path(__file__).parent / "static"
# The page loads only its own script and style; inline script (an injected one included) never runs.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class NoCorsForEditor:
    """Take the CORS headers off every response under /memories: the LangGraph server's CORS
    middleware answers every route, preflights included, with `Access-Control-Allow-Origin: *`
    (its `http.cors` setting would change it for the whole API, LangGraph Studio's calls
    included). Without those headers a browser lets no other site read the editor's answers,
    nor send it a request that needs a preflight.

    Under the server this app's middleware becomes the outermost layer, outside the CORS one
    (unless langgraph.json sets `"middleware_order": "auth_first"`, which moves it inside: keep
    the default). Other paths pass through untouched; responses are not buffered (the event
    stream flows as before).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path == PREFIX or path.startswith(f"{PREFIX}/")):
            await self.app(scope, receive, send)
            return

        async def send_without_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if not name.lower().startswith(b"access-control-")
                ]
            await send(message)

        await self.app(scope, receive, send_without_cors)


def _page(file_name: str) -> Callable[[Request], Awaitable[Response]]:
    """The handler serving one static page, to loopback hosts (or the configured ones) only."""

    async def serve(request: Request) -> Response:
        try:
            check_local_host(request)
        except ApiError as refused:
            return refused.response()
        return FileResponse(STATIC_DIR / file_name, headers=PAGE_HEADERS)

    return serve


index = _page("index.html")
conversations_page = unless_archive_off(_page("conversations.html"))  # feature: archive


async def to_index(request: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/", status_code=307)


def editor_routes() -> list[BaseRoute]:
    """Every route with its full path, so the server can merge them beside its own. The server
    reads each handler's docstring as OpenAPI YAML at start: a colon followed by a space in one
    prints a traceback (tests/webapp/test_route_docstrings.py)."""
    api = f"{PREFIX}/api"
    return [
        Route(f"{PREFIX}/", index, methods=["GET"]),
        Route(PREFIX, to_index, methods=["GET"]),
        Route(f"{PREFIX}/conversations/", conversations_page, methods=["GET"]),  # feature: archive
        Route(f"{api}/whoami", routes.whoami, methods=["GET"]),
        Route(f"{api}/conversations", search_conversations, methods=["GET"]),  # feature: archive
        Route(f"{api}/memories", routes.list_memories, methods=["GET"]),
        Route(f"{api}/memories", routes.add_memory, methods=["POST"]),
        Route(f"{api}/memories/{{id}}", routes.get_memory, methods=["GET"]),
        Route(f"{api}/memories/{{id}}", routes.edit_memory, methods=["PATCH"]),
        Route(f"{api}/memories/{{id}}", routes.delete_memory, methods=["DELETE"]),
        Route(f"{api}/memories/{{id}}/restore", routes.restore_memory, methods=["POST"]),
        Route(f"{api}/memories/{{id}}/erase", routes.erase_memory, methods=["POST"]),
        Route(f"{api}/erase-user", routes.erase_user, methods=["POST"]),
        Route(f"{api}/merge", routes.merge_memories, methods=["POST"]),
        Route(f"{api}/deleted", routes.list_deleted, methods=["GET"]),
        Route(f"{api}/status", routes.get_status, methods=["GET"]),
        Route(f"{api}/self-check", routes.run_self_check, methods=["POST"]),
        Route(f"{api}/consolidate", consolidate, methods=["POST"]),  # feature: consolidation
        Route(f"{api}/profile", get_profile, methods=["GET"]),
        Route(f"{api}/profile", put_profile, methods=["PUT"]),
        Route(f"{api}/export", routes.export_memories, methods=["GET"]),
        Route(f"{api}/import", routes.import_memories, methods=["POST"]),
        Route(f"{api}/events", routes.stream_events, methods=["GET"]),
        Mount(f"{PREFIX}/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ]


def server_app() -> Starlette:
    """The editor, and the MCP endpoint at /memories/mcp when GULFSTREAM_MCP=1 (its sessions
    run in this app's lifespan, which the LangGraph server runs beside its own)."""
    routes, lifespan = editor_routes(), None
    if get_settings().mcp:
        from webapp.mcp.http import mcp_routes

        mcp, lifespan = mcp_routes()
        routes = [*routes, *mcp]
    return Starlette(routes=routes, middleware=[Middleware(NoCorsForEditor)], lifespan=lifespan)


app = server_app()
