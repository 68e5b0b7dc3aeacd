"""`python -m webapp`: the memory editor alone on 127.0.0.1 for the file backends (local use)."""

from __future__ import annotations

import os

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import RedirectResponse
from starlette.routing import Route

from memory.integration import Settings, get_settings
from webapp.app import PREFIX, editor_routes
from webapp.guard import allowed_hosts

DEFAULT_PORT = 8765


def standalone_app() -> Starlette:
    """The editor's routes plus a redirect from / to the page, answering only to loopback names.

    The host check stops DNS rebinding: a web page whose name resolves to 127.0.0.1 would
    otherwise be same-origin with the editor and could read memories.
    """
    root = Route("/", lambda request: RedirectResponse(f"{PREFIX}/", status_code=307))
    loopback = Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts())
    return Starlette(routes=[root, *editor_routes()], middleware=[loopback])


def main() -> None:
    Settings.load_dotenv()
    port = int(os.environ.get("GULFSTREAM_EDITOR_PORT", DEFAULT_PORT))
    spec = get_settings().memory_backend
    print(f"Gulfstream memory editor: http://127.0.0.1:{port}{PREFIX}/  (backend {spec})")
    print("Local mode: pick the user with ?user=<id> in the URL (default 'default').")
    # Bound to loopback on purpose: without LangGraph auth the user id is whatever the URL says.
    # Open event streams never end on their own; give them a moment on Ctrl+C, then close them.
    uvicorn.run(
        standalone_app(),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
