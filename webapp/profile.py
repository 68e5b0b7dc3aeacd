"""The editor's profile: GET and PUT /memories/api/profile, the core context a user owns."""

from __future__ import annotations

import functools
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memory import LongTermMemory
from webapp.guard import ApiError, read_json_object
from webapp.routes import _run, api

PARTS = ("persona", "human")


def _profile(block: dict[str, str], private: list[str]) -> dict[str, Any]:
    """The parts the user owns, as every prompt shows them ("" for a part never set), and the
    threads kept off the record (their ids: nothing else of them is kept)."""
    return {
        "persona": block.get("persona", ""),
        "human": block.get("human", ""),
        "updated_at": block.get("updated_at", ""),
        "private_threads": private,
    }


async def _read(memory: LongTermMemory) -> dict[str, Any]:
    block = await _run(memory.get_core_context, None)
    return _profile(block, await _run(memory.manager.private_threads))


@api
async def get_profile(request: Request, memory: LongTermMemory) -> Response:
    """The persona the assistant takes with this user ("" = the app's own) and what it knows
    about them (`human`), as the next reply's prompt gets them."""
    return JSONResponse(await _read(memory))


@api
async def put_profile(request: Request, memory: LongTermMemory) -> Response:
    """Set `persona` and/or `human` (a part left out stays as it is). A `human` written here is
    the user's own, and the memory writer no longer rewrites it."""
    data = await read_json_object(request, set(PARTS))
    if not any(part in data for part in PARTS):
        raise ApiError(400, "give persona or human (or both)", "persona")
    for part in PARTS:
        if part in data and not isinstance(data[part], str):
            raise ApiError(400, f"{part} must be a string", part)
    edit = functools.partial(
        memory.manager.set_core_context, persona=data.get("persona"), human=data.get("human")
    )
    await _run(edit)
    return JSONResponse(await _read(memory))
