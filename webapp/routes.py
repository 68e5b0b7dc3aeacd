"""The JSON API under /memories/api/: every action the page takes, each refusing bad input whole.

Long because it is the page's whole API, one small handler per action, in the order the page uses
them.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sys
import unicodedata
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from memory import (
    BaseMemoryManager,
    Change,
    CorruptStoreError,
    LongTermMemory,
    MemoryBusy,
    MemoryItem,
    MemoryNotFound,
    StaleWrite,
    WritesDisabled,
)
from memory.integration import get_settings
from webapp import events, views
from webapp.access import is_stand_in, open_memory, read_memory, stored_memory
from webapp.guard import (
    ApiError,
    check_local_host,
    check_same_origin,
    check_write_allowed,
    error_response,
    read_body,
    read_json_object,
    resolve_caller,
)

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
    """Refuse other sites, resolve the user, open their memory (a read of a user with nothing
    stored gets an empty stand-in and creates nothing), and turn every refusal into a JSON 4xx."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            reading = request.method in ("GET", "HEAD")
            if reading:
                check_same_origin(request)
            else:
                check_write_allowed(request)
            check_local_host(request)
            caller = resolve_caller(request)
            if not reading:  # an oversized body is refused before a new user is created
                request.state.body = await read_body(request)
            loop = asyncio.get_running_loop()
            opener = read_memory if reading else open_memory
            memory = await to_thread.run_sync(opener, caller, loop)
            return await handler(request, memory)
        except ApiError as exc:
            return exc.response()
        except MemoryNotFound as exc:
            return error_response(404, str(exc), "id")
        except WritesDisabled as exc:
            return error_response(409, str(exc), None)
        except (CorruptStoreError, MemoryBusy) as exc:  # MemoryBusy: nothing written, try again
            return error_response(503, str(exc), None)
        except ValueError as exc:  # an import's names its field (ImportRejected.field)
            field = getattr(exc, "field", None) or _field_of(str(exc))
            return error_response(400, str(exc), field)
        except RecursionError:
            return error_response(400, "the request nests too deeply", "body")

    return endpoint


def _memory_id(request: Request) -> str:
    """The id in the path; one no memory could have (control characters, surrogates, too
    long) is a 404 before any backend sees it."""
    memory_id = str(request.path_params["id"])
    if len(memory_id) > 128 or any(
        0xD800 <= ord(char) <= 0xDFFF or unicodedata.category(char) in ("Cc", "Cf")
        for char in memory_id
    ):
        raise ApiError(404, "no memory has such an id", "id")
    return memory_id


def _text(data: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string", name)
    return value


def _reason(data: dict[str, Any], required: bool) -> str:
    reason = MemoryItem.check_reason(data.get("reason"))
    if required and not reason:
        raise ApiError(400, "reason must say why (it goes into the history)", "reason")
    return reason


async def _run(fn: Callable[..., Any], *args: Any) -> Any:
    # File and database I/O stays off the event loop (the LangGraph server flags blocking calls).
    return await to_thread.run_sync(fn, *args)


async def _revision(manager: BaseMemoryManager) -> str:
    return str(await to_thread.run_sync(lambda: manager.revision))


def _page_size(request: Request) -> int:
    raw = request.query_params.get("limit", "")
    if not raw:
        return views.PAGE_SIZE
    if not raw.isdigit() or not 1 <= int(raw) <= views.MAX_PAGE_SIZE:
        message = f"limit must be a whole number from 1 to {views.MAX_PAGE_SIZE}"
        raise ApiError(400, message, "limit")
    return int(raw)


@api
async def list_memories(request: Request, memory: LongTermMemory) -> Response:
    q, theme = request.query_params.get("q", ""), request.query_params.get("theme", "")
    if len(q) > 500:
        raise ApiError(400, "q is longer than 500 characters", "q")
    after = request.query_params.get("after", "")
    sort = request.query_params.get("sort", "newest")
    group = request.query_params.get("group", "theme")
    views.check_view(sort, group)  # 400 naming the field before any store is read
    listing = functools.partial(
        views.waterfall, after=after, limit=_page_size(request), sort=sort, group=group
    )
    page = await _run(listing, memory, q, theme)
    return JSONResponse(page)


@api
async def add_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"description", "theme", "reason"})
    description = MemoryItem.check_description(_text(data, "description"))
    theme = MemoryItem.check_theme(_text(data, "theme"))
    memory_id = await _run(manager.add, description, theme, _reason(data, False))
    return JSONResponse({"id": memory_id, "revision": await _revision(manager)}, status_code=201)


@api
async def get_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    return JSONResponse(await _run(views.card_with_history, manager, _memory_id(request)))


@api
async def edit_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(
        request, {"description", "theme", "reason", "expected_update_time"}
    )
    description, theme = _text(data, "description", False), _text(data, "theme", False)
    if description is None and theme is None:
        raise ApiError(400, "send description and/or theme to change", "description")
    description = MemoryItem.check_description(description) if description is not None else None
    theme = MemoryItem.check_theme(theme) if theme is not None else None
    change = Change(
        op="update",
        id=_memory_id(request),
        description=description,
        theme=theme,
        reason=_reason(data, True),
        expected_update_time=_expected_time(data, "expected_update_time"),
    )
    await _apply_checked(manager, change)
    return JSONResponse(await _run(views.card_with_history, manager, _memory_id(request)))


@api
async def delete_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"reason", "expected_update_time"})
    change = Change(
        op="delete",
        id=_memory_id(request),
        reason=_reason(data, False) or "deleted in the memory editor",
        expected_update_time=_expected_time(data, "expected_update_time"),
    )
    await _apply_checked(manager, change)
    return JSONResponse(
        {"id": _memory_id(request), "deleted": True, "revision": await _revision(manager)}
    )


@api
async def restore_memory(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    data = await read_json_object(request, {"reason"})
    reason = _reason(data, False) or "restored in the memory editor"
    await _run(manager.restore, _memory_id(request), reason)
    return JSONResponse(await _run(views.card_with_history, manager, _memory_id(request)))


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
    description = MemoryItem.check_description(_text(data, "description"))
    theme = MemoryItem.check_theme(_text(data, "theme"))
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
    document = await _run(memory.export_memories)
    name = f"memories-{memory.user_id}.json"
    return JSONResponse(document, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@api
async def import_memories(request: Request, memory: LongTermMemory) -> Response:
    data = await read_json_object(request)  # the export's own fields: import_memories checks
    outcome = await _run(memory.import_memories, data)
    # A small import is searchable by meaning when this answers; a large one is embedded in the
    # background (the status says so) and found by BM25 meanwhile.
    vectors_ready = await _run(memory.retrievers.catch_up)
    return JSONResponse(
        {
            "vectors_ready": vectors_ready,
            "added": outcome.added,
            "superseded": outcome.superseded,
            "skipped": outcome.skipped,
            "profile": outcome.profile,
            "revision": await _revision(memory.manager),
        }
    )


@api
async def stream_events(request: Request, memory: LongTermMemory) -> Response:
    since = request.query_params.get("since", "")
    reopen = None
    if is_stand_in(memory):
        caller, loop = resolve_caller(request), asyncio.get_running_loop()
        reopen = functools.partial(stored_memory, caller, loop)
    return StreamingResponse(
        events.change_stream(memory, since, request.is_disconnected, reopen),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _confirmed(data: dict[str, Any], word: str) -> None:
    if data.get("confirm") != word:
        raise ApiError(400, f"erasing cannot be undone: send confirm={word!r} to do it", "confirm")


@api
async def erase_memory(request: Request, memory: LongTermMemory) -> Response:
    """Erase one memory for good (`LongTermMemory.erase`), tombstone or not; the report says
    what went where."""
    memory_id = _memory_id(request)
    _confirmed(await read_json_object(request, {"confirm"}), memory_id)
    report = await _run(memory.erase, memory_id)  # and from the archive (`find_archive`)
    return JSONResponse({**report.to_dict(), "revision": await _revision(memory.manager)})


@api
async def erase_user(request: Request, memory: LongTermMemory) -> Response:
    """Delete everything of the signed-in (or local) user (`LongTermMemory.erase_user`), never
    another's; under the LangGraph server their threads too (those their archive and journal
    name). The editor alone has no checkpointer, so its report says the threads stay."""
    _confirmed(await read_json_object(request, {"confirm"}), memory.user_id)
    threads = None
    if "langgraph_api" in sys.modules:  # mounted on the server: its threads are its own
        from webapp.server_store import ServerThreads

        threads = ServerThreads(asyncio.get_running_loop())
    erase = functools.partial(memory.erase_user, threads=threads)
    report = await _run(erase)
    return JSONResponse({**report.to_dict(), "revision": await _revision(memory.manager)})


@api
async def whoami(request: Request, memory: LongTermMemory) -> Response:
    manager = memory.manager
    caller = resolve_caller(request)
    settings = get_settings()
    # What the page shows of the optional features: nothing of one the deployment turned off.
    features: dict[str, bool] = {}
    features["archive"] = settings.archive_on  # feature: archive
    features["hotness"] = settings.hotness_half_life_days > 0  # feature: hotness
    features["topics"] = settings.topics  # feature: topics
    return JSONResponse(
        {"user_id": caller.user_id, "auth_mode": caller.mode, "backend": manager.backend,
         "features": features}
    )  # fmt: skip
