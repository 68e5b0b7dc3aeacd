"""The MCP tool over the conversation archive, search_conversations (deleted with the archive)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver import MCPServer

from memory import LongTermMemory
from memory.integration import get_settings, search_archive
from webapp.mcp.tools import BadRequest, checked_text


def search_conversations(
    memory: LongTermMemory, query: str, since: str, until: str, thread: str
) -> dict[str, Any]:
    """The conversation archive's search (every thread, or one), what carries a forgotten
    memory left out, as for the agent."""
    query = checked_text(query, "query", empty_ok=True)
    if not query and not since.strip() and not until.strip():
        raise BadRequest("send a query, or since/until dates (YYYY-MM-DD) for a period")
    try:
        return search_archive(
            memory.user_id, query, since=since, until=until, thread=thread, memory=memory
        )
    except ValueError as exc:  # a day in neither accepted form
        raise BadRequest(str(exc)) from exc


def add_conversation_search(
    server: MCPServer, door: Any, call: Callable[..., Awaitable[Any]]
) -> None:
    """Register search_conversations on `server`, reaching the memory `door` opens; not while
    the deployment keeps no archive (GULFSTREAM_CONVERSATION_ARCHIVE=off)."""
    if not get_settings().archive_on:
        return

    @server.tool(name="search_conversations")
    async def search_tool(
        ctx: McpContext, query: str = "", since: str = "", until: str = "", thread: str = ""
    ) -> dict[str, Any]:
        """Search what was said in the user's past conversations (every thread).

        query: a few words to look for, or the question; a date in it limits the period.
        since / until: optional days, YYYY-MM-DD (both included).
        thread: optional; one conversation's thread id.
        """
        memory = await door.memory(ctx, write=False)
        return await call(search_conversations, memory, query, since, until, thread)
