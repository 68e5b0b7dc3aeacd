"""Who an MCP call acts for and how their memory is reached: the stdio user, or the HTTP caller."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from anyio import to_thread
from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver.exceptions import ToolError

from memory import BaseMemoryManager, Lineage, LongTermMemory
from memory.integration import LocalSession, Settings, get_settings, open_user_memory
from webapp.access import open_memory, read_memory
from webapp.guard import ApiError, check_local_host, resolve_caller

HISTORY_LIMIT = 1000  # checkpoints of a server thread read for its lineage
# memory/integration/auth.py stamps this metadata key on every thread (importing it would set up
# its auth).
OWNER_KEY = "owner"


def stdio_memory(user_id: str) -> LongTermMemory:
    """`user_id`'s memory on the deployment's backend, outside the LangGraph server (whose
    `store` backend only a server reaches: ValueError)."""
    if get_settings().memory_backend.split(":", 1)[0].strip().lower() == "store":
        raise ValueError(
            "the store backend lives in the LangGraph server: use its MCP endpoint "
            "(/memories/mcp with GULFSTREAM_MCP=1), or a yaml, sqlite or postgres: backend"
        )
    return open_user_memory(user_id)


def file_lineage(threads_file: Path, thread: str) -> Lineage:
    """The lineage of a new turn at the end of `thread` in `make chat`'s checkpoint file."""
    try:
        return LocalSession.thread_lineage(threads_file, thread)
    except LookupError as exc:
        raise ToolError(str(exc)) from exc


class StdioDoor:
    """Every call acts for the one user the server was started for."""

    def __init__(self, user_id: str, threads_file: Path) -> None:
        self.user_id = BaseMemoryManager.validate_user_id(user_id)
        self.threads_file = threads_file
        self._memory: LongTermMemory | None = None

    def open(self) -> LongTermMemory:
        if self._memory is None:
            self._memory = stdio_memory(self.user_id)
        return self._memory

    async def memory(self, ctx: McpContext, *, write: bool) -> LongTermMemory:
        return await to_thread.run_sync(self.open)

    async def lineage(self, ctx: McpContext, user_id: str, thread: str) -> Lineage:
        return await to_thread.run_sync(file_lineage, self.threads_file, thread.strip())


class HttpDoor:
    """Each call acts for its HTTP caller, resolved as the editor resolves it (docs/AUTH.md):
    the authenticated LangGraph user, else, in local mode only, `X-Gulfstream-User` or
    `?user=`. Never a tool argument. Threads are the LangGraph server's (only the caller's
    own), or `threads_file`'s when the endpoint runs on its own."""

    def __init__(self, threads_file: Path | None = None) -> None:
        self.threads_file = threads_file

    async def memory(self, ctx: McpContext, *, write: bool) -> LongTermMemory:
        caller = caller_of(ctx)
        opener = open_memory if write else read_memory  # a read creates nothing
        return await to_thread.run_sync(opener, caller, asyncio.get_running_loop())

    async def lineage(self, ctx: McpContext, user_id: str, thread: str) -> Lineage:
        thread = thread.strip()
        if self.threads_file is not None:
            return await to_thread.run_sync(file_lineage, self.threads_file, thread)
        return await server_lineage(user_id, thread)


def caller_of(ctx: McpContext) -> Any:
    """The editor's `Caller` of the HTTP request carrying this call."""
    request = ctx.request_context.request
    if request is None:
        raise ToolError("this MCP endpoint needs an HTTP request to know its user")
    try:
        check_local_host(request)
        return resolve_caller(request)
    except ApiError as exc:
        raise ToolError(exc.message) from exc


async def server_lineage(user_id: str, thread: str) -> Lineage:
    """A server thread's newest branch, read through the in-process SDK client (which skips
    auth: the owner is checked here, and another user's thread reads as unknown)."""
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import NotFoundError

    client = get_client()
    unknown = ToolError(f"no conversation thread {thread!r}")
    try:
        info = await client.threads.get(thread)
    except NotFoundError as exc:
        raise unknown from exc
    owner = (info.get("metadata") or {}).get(OWNER_KEY)
    if Settings.custom_auth() and owner != user_id:
        raise unknown
    states: list[Any] = list(await client.threads.get_history(thread, limit=HISTORY_LIMIT))
    parents: dict[str, str] = {}
    for state in states:
        checkpoint, parent = state.get("checkpoint") or {}, state.get("parent_checkpoint") or {}
        if checkpoint.get("checkpoint_id"):
            parents[str(checkpoint["checkpoint_id"])] = str(parent.get("checkpoint_id") or "")
    chain: list[str] = []
    newest = (states[0].get("checkpoint") or {}) if states else {}
    current = str(newest.get("checkpoint_id") or "")
    while current and current not in chain:
        chain.append(current)
        current = parents.get(current, "")
    return Lineage(thread, frozenset(chain))
