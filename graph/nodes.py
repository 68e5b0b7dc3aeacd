"""The nodes of the chat graph: retrieve_memory → agent ⇄ tools → ltm_write."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph.context import Context
from graph.lineage import current_lineage
from graph.memory_access import (
    context_of,
    facade_for,
    open_manager,
    resolve_user_id,
)
from graph.models import load_chat_model
from graph.prompting import (
    build_system_prompt,
    prompt_language,
)
from graph.state import State
from graph.tools import CHAT_TOOLS
from memory.writer.turns import text_of

logger = logging.getLogger(__name__)


def message_text(message: AnyMessage) -> str:
    """The text of a message whether its content is a string or a list of parts (the memory
    writer's own reading of it, so the chat and the writer see the same text)."""
    return text_of(message.content)


def latest_user_text(messages: Sequence[AnyMessage]) -> str:
    """The text of the latest user message ("" when there is none)."""
    return next((message_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")


def retrieve_memory(state: State, runtime: Runtime[Context]) -> dict:
    """Find the memories related to the latest user message that this branch of the
    conversation may read, and the user's core context (sync: the store's sync API is only
    allowed off the server's event loop)."""
    context = context_of(runtime.context)
    config = get_config()
    manager = open_manager(context, resolve_user_id(config, context), runtime.store)
    # The goal is this conversation's own: another thread of the user has its own goal.
    thread_id = (config.get("configurable") or {}).get("thread_id")
    core_context = _read_core_context(manager, str(thread_id) if thread_id else None)
    query = latest_user_text(state.messages)
    if not query.strip():
        return {"related_memories": [], "core_context": core_context}
    memories = facade_for(manager, context).get_related_memory_from(
        query,
        context.retrieval_mode,
        limit=context.retrieval_limit,
        lineage=current_lineage(config),
    )
    return {"related_memories": list(memories), "core_context": core_context}


def _read_core_context(manager: Any, thread_id: str | None) -> dict[str, str]:
    try:
        return dict(manager.get_core_context(thread_id))
    except Exception:  # like retrieval: a broken store never breaks the chat
        logger.exception("reading the core context of %r failed", manager.user_id)
        return {}


def agent(state: State, runtime: Runtime[Context]) -> dict:
    """Answer with the chat model; core context and memories in the system prompt, the chat
    tools bound."""
    context = context_of(runtime.context)
    model = load_chat_model(context.model).bind_tools(CHAT_TOOLS)
    language = prompt_language(context, latest_user_text(state.messages))
    prompt = build_system_prompt(context, state.related_memories, state.core_context, language)
    response = model.invoke([SystemMessage(content=prompt), *state.messages])
    return {"messages": [response]}


def route_after_agent(state: State) -> Literal["tools", "ltm_write"]:
    """Run the tools the model asked for, else finish the turn."""
    last = state.messages[-1] if state.messages else None
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "ltm_write"
