"""The JSON API under /memories/api/: every action the page takes, each refusing bad input whole."""

from __future__ import annotations

import asyncio
import functools
import re
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from graph.embeddings import deployment_embeddings
from graph.settings import get_settings
from memory.document import Change
from memory.errors import CorruptStoreError, MemoryNotFound, StaleWrite, WritesDisabled
from memory.item import check_description, check_reason, check_theme
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager
from memory.registry import registry
from webapp import events, transfer, views
from webapp.guard import (
    ApiError,
    Caller,
    check_local_host,
    check_write_allowed,
    error_response,
    read_json_object,
    resolve_caller,
)
from webapp.server_store import server_store

Handler = Callable[[Request], Awaitable[Response]]
# The manager's messages start with the field they reject; the API's names are shorter.
_FIELD_ALIASES = {
    "new_description": "description",
    "merged_description": "description",
    "new_theme": "theme",
    "merged_theme": "theme",
    "user_id": "user",
    "id1": "id",
    "id2": "other_id",
}


def open_memory(caller: Caller, loop: asyncio.AbstractEventLoop) -> LongTermMemory:
    """The caller's memory on the deployment's backend. The `store` backend is the LangGraph
    server's live store, reached from this server's event loop `loop`; the namespace is always
    the caller's own."""
    settings = get_settings()
    spec = settings.memory_backend
    store = None
    if spec.split(":", 1)[0].strip().lower() == "store":
        if "langgraph_api.server" not in sys.modules:
            raise ApiError(
                501,
                "the store backend lives in the LangGraph server: open the editor under "
                "`langgraph dev` (make dev), or use a yaml, sqlite or postgres backend",
                "GULFSTREAM_MEMORY_BACKEND",
            )
        store = server_store(loop)
    return registry.open(
        spec,
        caller.user_id,
        store,
        default_data_dir=settings.data_dir,
        snapshot_delay=settings.snapshot_seconds,
        embeddings=deployment_embeddings(),
    )


def _field_of(message: str) -> str | None:
    match = re.match(r"^([A-Za-z_][\w.]*)\b", message)
    if not match:
        return None
    name = match.group(1)
    return _FIELD_ALIASES.get(name, name)


class EditConflict(ApiError):
    """The memory changed after the page read it: 409, naming the expectation that failed."""

    def __init__(self, stale: StaleWrite, field: str) -> None:
        self.memory_id = stale.memory_id
        super().__init__(
            409,
            f"memory {stale.memory_id!r} changed since the page showed it (another writer or "
            "tab saved it meanwhile); nothing was saved: reload it and try again",
            field,
        )


def _expected_time(data: dict[str, Any], name: str) -> str | None:
    """The `latest_update_time` the page showed (None: the caller asked for no check)."""
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ApiError(400, f"{name} must be the card's latest_update_time (a string)", name)
    return value


async def _apply_checked(
    manager: BaseMemoryManager, change: Change, other_id: str | None = None
) -> None:
    """Apply one editor change as its own turn, refused whole (409) if its item changed since
    the page read it. A fresh turn id per request: the same edit sent twice is two edits."""
    try:
        await _run(manager.apply, [change], f"editor:{uuid.uuid4().hex}")
    except StaleWrite as stale:
        field = "expected_other_update_time" if stale.memory_id == other_id else None
        raise EditConflict(stale, field or "expected_update_time") from stale


def api(handler: Callable[[Request, LongTermMemory], Awaitable[Response]]) -> Handler:
    """Resolve the user, open their memory, and turn every refusal into a JSON 4xx/5xx."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            if request.method not in ("GET", "HEAD"):
                check_write_allowed(request)
            check_local_host(request)
            caller = resolve_caller(request)
            loop = asyncio.get_running_loop()
            memory = await to_thread.run_sync(open_memory, caller, loop)
            return await handler(request, memory)
        except ApiError as exc:
            return exc.response()
        except MemoryNotFound as exc:
            return error_response(404, str(exc), "id")
        except WritesDisabled as exc:
            return error_response(409, str(exc), None)
        except CorruptStoreError as exc:
            return error_response(503, str(exc), None)
        except transfer.ImportRejected as exc:
            return error_response(400, str(exc), exc.field)
        except ValueError as exc:
            return error_response(400, str(exc), _field_of(str(exc)))

    return endpoint


def _text(data: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string", name)
    return value


def _reason(data: dict[str, Any], required: bool) -> str:
    reason = check_reason(data.get("reason"))
    if required and not reason:
        raise ApiError(400, "reason must say why (it goes into the history)", "reason")
    return reason


async def _run(fn: Callable[..., Any], *args: Any) -> Any:
    # File and database I/O stays off the event loop (the LangGraph server flags blocking calls).
    return await to_thread.run_sync(fn, *args)


async def _revision(manager: BaseMemoryManager) -> str:
    return str(await to_thread.run_sync(lambda: manager.revision))


@api
async def list_memories(request: Request, memory: LongTermMemory) -> Response:
    q, theme = request.query_params.get("q", ""), request.query_params.get("theme", "")
    if len(q) > 500:
        raise ApiError(400, "q is longer than 500 characters", "q")
    return JSONResponse(await _run(views.waterfall, memory, q, theme))


@api
async def add_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"description", "theme", "reason"})
    description = check_description(_text(data, "description"))
    theme = check_theme(_text(data, "theme"))
    memory_id = await _run(manager.add, description, theme, _reason(data, False))
    return JSONResponse({"id": memory_id, "revision": await _revision(manager)}, status_code=201)


@api
async def get_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    return JSONResponse(await _run(views.card_with_history, manager, request.path_params["id"]))


@api
async def edit_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(
        request, {"description", "theme", "reason", "expected_update_time"}
    )
    description, theme = _text(data, "description", False), _text(data, "theme", False)
    if description is None and theme is None:
        raise ApiError(400, "send description and/or theme to change", "description")
    description = check_description(description) if description is not None else None
    theme = check_theme(theme) if theme is not None else None
    change = Change(
        op="update",
        id=request.path_params["id"],
        description=description,
        theme=theme,
        reason=_reason(data, True),
        expected_update_time=_expected_time(data, "expected_update_time"),
    )
    await _apply_checked(manager, change)
    return JSONResponse(await _run(views.card_with_history, manager, request.path_params["id"]))


@api
async def delete_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"reason", "expected_update_time"})
    change = Change(
        op="delete",
        id=request.path_params["id"],
        reason=_reason(data, False) or "deleted in the memory editor",
        expected_update_time=_expected_time(data, "expected_update_time"),
    )
    await _apply_checked(manager, change)
    return JSONResponse(
        {"id": request.path_params["id"], "deleted": True, "revision": await _revision(manager)}
    )


@api
async def restore_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"reason"})
    reason = _reason(data, False) or "restored in the memory editor"
    await _run(manager.restore, request.path_params["id"], reason)
    return JSONResponse(await _run(views.card_with_history, manager, request.path_params["id"]))


@api
async def merge_memories(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(
        request,
        {"id", "other_id", "description", "theme", "reason"}
        | {"expected_update_time", "expected_other_update_time"},
    )
    keep, other = _text(data, "id"), _text(data, "other_id")
    assert keep is not None and other is not None  # _text raised otherwise
    if keep == other:
        raise ApiError(400, "other_id must name a different memory than id", "other_id")
    description = check_description(_text(data, "description"))
    theme = check_theme(_text(data, "theme"))
    change = Change(
        op="merge",
        id=keep,
        other_id=other,
        description=description,
        theme=theme,
        reason=_reason(data, True),
        expected_update_time=_expected_time(data, "expected_update_time"),
        expected_other_update_time=_expected_time(data, "expected_other_update_time"),
    )
    await _apply_checked(manager, change, other)
    return JSONResponse(await _run(views.card_with_history, manager, keep))


@api
async def list_deleted(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    return JSONResponse({"items": await _run(views.deleted_cards, manager)})


@api
async def get_status(request: Request, memory: LongTermMemory) -> Response:
    caller = resolve_caller(request)
    return JSONResponse({**await _run(views.status, memory), "auth_mode": caller.mode})


@api
async def run_self_check(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    await read_json_object(request, set())
    await _run(manager.self_check)
    return JSONResponse(await _run(views.status, memory))


@api
async def export_memories(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    document = await _run(transfer.export_document, manager)
    name = f"memories-{manager.user_id}.json"
    return JSONResponse(document, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@api
async def import_memories(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, transfer.IMPORT_FIELDS)
    items = transfer.parse_import(data)
    origin_user, exported_at = str(data.get("user_id", "?"))[:64], str(data.get("exported_at", "?"))
    source = f"an export of user {origin_user} at {exported_at[:40]}"
    outcome = await _run(transfer.import_items, manager, items, source)
    return JSONResponse(
        {
            "added": outcome.added,
            "superseded": outcome.superseded,
            "skipped": outcome.skipped,
            "revision": await _revision(manager),
        }
    )


@api
async def stream_events(request: Request, memory: LongTermMemory) -> Response:
    since = request.query_params.get("since", "")
    return StreamingResponse(
        events.change_stream(memory, since, request.is_disconnected),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@api
async def whoami(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    caller = resolve_caller(request)
    return JSONResponse(
        {"user_id": caller.user_id, "auth_mode": caller.mode, "backend": manager.backend}
    )
