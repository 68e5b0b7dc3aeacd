"""The editor's read-only conversation search: GET /memories/api/conversations?q=&since=&until=."""

from __future__ import annotations

import asyncio
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memory.archive import SearchResult, Window, archive_exists, archives, parse_day
from memory.archive.reconcile import reconcile
from memory.archive.render import local_time
from memory.integration.conversations.archiving import archive_spec
from memory.long_term import LongTermMemory
from webapp.access import stored_memory
from webapp.guard import ApiError, check_local_host, check_same_origin, resolve_caller

MAX_QUERY_CHARS = 200
HITS = 10


def _result(result: SearchResult) -> dict[str, Any]:
    hits: list[dict[str, Any]] = []
    for hit in result.hits:
        if hit.digest is not None:
            hits.append({"digest": {"day": hit.digest.day, "text": hit.digest.text,
                                    "messages": hit.digest.message_count}})  # fmt: skip
            continue
        ordered = sorted((*hit.around, hit.anchor),
                         key=lambda m: (m.timestamp, m.checkpoint_id, m.position))  # fmt: skip
        hits.append({
            "thread_id": hit.thread_id,
            "messages": [{"role": m.role, "content": m.content, "time": local_time(m.timestamp),
                          "match": m is hit.anchor} for m in ordered],
        })  # fmt: skip
    return {"query": result.query, "hits": hits, "notes": list(result.notes)}


def search_archive(
    user_id: str, query: str, window: Window, memory: LongTermMemory | None, limit: int = HITS
) -> dict[str, Any]:
    """`{query, hits, notes}` from the user's archive (the editor's page and MCP's tool read
    it); a user never archived gets no hits and no archive is created."""
    spec = archive_spec()
    if not archive_exists(spec, user_id):  # a read creates nothing for a user never archived
        return {"query": query, "hits": [], "notes": []}
    archive = archives.open(spec, user_id)
    if archive is None:
        return {"query": query, "hits": [], "notes": ["the conversation archive is off"]}
    if memory is not None:  # what carries a forgotten memory is left out, as for the agent
        reconcile(memory.manager, archive)
    return _result(archive.search(query, window, limit=limit))


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
        try:
            window = Window(
                parse_day(params.get("since")), parse_day(params.get("until"), end=True)
            )
        except ValueError as exc:
            raise ApiError(400, str(exc), "since") from exc
        loop = asyncio.get_running_loop()
        memory = await to_thread.run_sync(stored_memory, caller, loop)
        found = await to_thread.run_sync(search_archive, caller.user_id, query, window, memory)
    except ApiError as exc:
        return exc.response()
    return JSONResponse(found)
