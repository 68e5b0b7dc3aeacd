"""`python -m webapp.mcp --user alice` (stdio, `make mcp`) or `--http` (127.0.0.1:8766)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware

from memory.integration import Settings
from webapp.guard import allowed_hosts
from webapp.mcp.doors import StdioDoor
from webapp.mcp.http import MCP_PATH, mcp_routes
from webapp.mcp.server import build_server

DEFAULT_PORT = 8766
DEFAULT_THREADS = Path("data/chat/threads.sqlite")  # make chat's conversations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m webapp.mcp", description=__doc__)
    parser.add_argument("--user", default="", help="whose memory stdio serves (default: "
                        "GULFSTREAM_USER_ID, else 'default')")  # fmt: skip
    parser.add_argument("--http", action="store_true", help="streamable HTTP, not stdio")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the --http port")
    parser.add_argument("--threads", type=Path, default=DEFAULT_THREADS,
                        help="the chat's checkpoint file, for the thread argument")  # fmt: skip
    args = parser.parse_args(argv)
    # stdout is the protocol: every log line, and anything a library prints, goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    Settings.load_dotenv()
    if args.http:
        routes, lifespan = mcp_routes(args.threads)
        loopback = Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts())
        app = Starlette(routes=routes, middleware=[loopback], lifespan=lifespan)
        print(f"Gulfstream MCP: http://127.0.0.1:{args.port}{MCP_PATH}", file=sys.stderr)
        # Loopback only: without LangGraph auth the user is whatever the request names.
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
        return 0
    user = args.user or os.environ.get("GULFSTREAM_USER_ID", "") or "default"
    try:
        door = StdioDoor(user, args.threads)
        with contextlib.redirect_stdout(sys.stderr):  # a model or store that prints at load
            door.open()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    build_server(door).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
