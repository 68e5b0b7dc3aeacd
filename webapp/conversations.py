"""The editor's read-only conversation search: GET /memories/api/conversations?q=&since=&until=."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from memory.integration import get_settings, search_archive
from webapp.access import stored_memory
from webapp.guard import ApiError, check_local_host, check_same_origin, resolve_caller

MAX_QUERY_CHARS = 200
ARCHIVE_OFF = "the conversation archive is off (GULFSTREAM_CONVERSATION_ARCHIVE)"


def unless_archive_off(
    serve: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """The Conversations page while the deployment keeps an archive; a 404 saying it is off
    otherwise (the editor's link is hidden then too)."""

    async def page(request: Request) -> Response:
        if not get_settings().archive_on:
            return PlainTextResponse(ARCHIVE_OFF, status_code=404)
        return await serve(request)

    return page


async def search_conversations(request: Request) -> Response:
    """Every thread and branch of the signed-in (or local) user's archive; never another's."""
    try:
        check_same_origin(request)
        check_local_host(request)
        caller = resolve_caller(request)
        params = request.query_params
        query = params.get("q", "")
        if len(query) > MAX_QUERY_CHARS:
            raise ApiError(400, f"q holds at most {MAX_QUERY_CHARS} characters", "q")
        since, until = params.get("since", ""), params.get("until", "")
        loop = asyncio.get_running_loop()
        memory = await to_thread.run_sync(stored_memory, caller, loop)
        search = functools.partial(
            search_archive, caller.user_id, query, since=since, until=until, memory=memory
        )
        try:
            found = await to_thread.run_sync(search)
        except ValueError as exc:  # a day in neither accepted form (checked before any read)
            raise ApiError(400, str(exc), "since") from exc
    except ApiError as exc:
        return exc.response()
    return JSONResponse(found)
