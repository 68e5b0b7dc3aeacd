"""The editor's read-only conversation search: GET /memories/api/conversations?q=&since=&until=."""

from __future__ import annotations

import asyncio
import functools

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memory.integration import search_archive
from webapp.access import stored_memory
from webapp.guard import ApiError, check_local_host, check_same_origin, resolve_caller

MAX_QUERY_CHARS = 200


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
