"""The MCP server: the memory tools and the core-context resource, each for the caller's user."""

from __future__ import annotations

import json
import uuid
from typing import Any, Protocol

from anyio import to_thread
from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from graph.context import Context
from memory import Lineage, LongTermMemory, MemoryBusy, Turn
from memory.integration import RunMemory, get_settings, write_now
from prompts.mcp import INSTRUCTIONS, REMEMBER_REQUEST
from webapp.mcp import tools
from webapp.mcp.conversations import add_conversation_search  # feature: archive

SERVER_NAME = "gulfstream-memory"
CORE_CONTEXT_URI = "memory://core-context{?thread}"
# The thread the writer records for what `remember` stores (its provenance; no chat has it).
MCP_THREAD = "mcp"


class Door(Protocol):
    """Who a call acts for and how their memory is reached: the stdio user, or the HTTP caller."""

    async def memory(self, ctx: McpContext, *, write: bool) -> LongTermMemory:
        """The caller's memory; a read opens (and creates) nothing for a user with none."""
        ...

    async def lineage(self, ctx: McpContext, user_id: str, thread: str) -> Lineage:
        """What a new turn at the end of `thread` may read; ToolError for a thread the caller
        does not have."""
        ...


def build_server(door: Door) -> MCPServer:
    """The MCP server whose every tool reaches only the memory `door` opens for the call."""
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    async def call(fn: Any, *args: Any) -> Any:
        try:
            return await to_thread.run_sync(fn, *args)
        except ValueError as exc:  # BadRequest, and what the manager refuses (a bad text)
            raise ToolError(str(exc)) from exc
        except MemoryBusy as exc:
            raise ToolError(f"{exc}; nothing was written, try again in a moment") from exc

    @server.tool()
    async def search_memories(
        query: str, ctx: McpContext, limit: int = 10, thread: str = ""
    ) -> dict[str, Any]:
        """Search the user's long-term memory, best match first (the chat's own retrieval).

        query: what you want to know, in the user's words ("my daughter's name").
        limit: how many memories at most (1-100).
        thread: optional; a conversation thread id: then only what that conversation may read
        (a forked conversation does not see its siblings' memories).
        """
        memory = await door.memory(ctx, write=False)
        lineage = await door.lineage(ctx, memory.user_id, thread) if thread.strip() else None
        run = _run(memory, "")
        llm = await to_thread.run_sync(run.ranking_model)
        mode = run.context.retrieval_mode
        found = await call(tools.search_memories, memory, query, limit, mode, lineage, llm)
        return {"memories": found}

    @server.tool()
    async def remember(fact: str, ctx: McpContext) -> dict[str, Any]:
        """Keep something about the user for later conversations, as they would ask you to.

        fact: one thing, in the user's words ("My daughter Mia turns seven in March").
        The memory writer decides how to store it: it may update an older memory, merge a
        repeat, or keep nothing for small talk (status "skipped", with why).
        """
        try:
            fact = tools.checked_text(fact, "fact")
        except tools.BadRequest as exc:
            raise ToolError(str(exc)) from exc
        memory = await door.memory(ctx, write=True)
        run = _run(memory, MCP_THREAD)
        said = REMEMBER_REQUEST.format(fact=fact)
        related = await call(memory.get_related_memory_from, said, "mechanical", 10)
        turn = Turn(
            memory.user_id, f"mcp:{uuid.uuid4().hex}", ({"role": "user", "content": said},),
            thread_id=MCP_THREAD, language=run.context.language,
            writer_model=run.context.writer_model,
        )  # fmt: skip
        try:
            written = await write_now(run, turn, related)
        except MemoryBusy as exc:
            raise ToolError(f"{exc}; nothing was written, try again in a moment") from exc
        except Exception as exc:  # the writer failed: say so, never "remembered"
            raise ToolError(f"nothing was remembered: {type(exc).__name__}: {exc}") from exc
        return {
            "status": written.status,
            "reason": written.reason,
            "changes": list(written.changes),
        }

    @server.tool()
    async def update_memory(
        id: str, description: str, ctx: McpContext, theme: str = ""
    ) -> dict[str, Any]:
        """Rewrite one memory (its old text stays in its history).

        id: from search_memories or list_memories. description: the new text.
        theme: optional new theme; leave it empty to keep the current one.
        """
        memory = await door.memory(ctx, write=True)
        return await call(tools.update_memory, memory, id, description, theme)

    @server.tool()
    async def forget_memory(id: str, ctx: McpContext) -> dict[str, Any]:
        """Forget one memory, as when the user says "forget that" in the chat: it leaves
        retrieval, and the past conversations that carry it are hidden from search.

        id: from search_memories or list_memories.
        """
        memory = await door.memory(ctx, write=True)
        return await call(tools.forget_memory, memory, id)

    @server.tool()
    async def list_memories(ctx: McpContext, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """List the user's memories, most recently changed first, a page at a time."""
        memory = await door.memory(ctx, write=False)
        return await call(tools.list_memories, memory, offset, limit)

    @server.tool()
    async def show_memory(id: str, ctx: McpContext) -> dict[str, Any]:
        """One memory with its history (each change, newest first, and why it was made)."""
        memory = await door.memory(ctx, write=False)
        return await call(tools.show_memory, memory, id)

    add_conversation_search(server, door, call)  # feature: archive

    @server.resource(CORE_CONTEXT_URI, mime_type="application/json")
    async def core_context(ctx: McpContext, thread: str = "") -> str:
        """The user's core context: who the assistant is to them, what it knows of them, and
        the goal of a conversation when `?thread=<id>` names one."""
        memory = await door.memory(ctx, write=False)
        found = await call(memory.get_core_context, thread.strip() or None)
        return json.dumps(found, ensure_ascii=False)

    return server


def _run(memory: LongTermMemory, thread_id: str) -> RunMemory:
    """A call as the graph's nodes see a run: the deployment's settings, the default context
    (models, retrieval mode, language) for this user."""
    context = Context(user_id=memory.user_id)
    return RunMemory(get_settings(), context, memory.user_id, thread_id, "", memory, {})
