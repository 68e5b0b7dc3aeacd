"""The nodes of the chat graph: retrieve_memory → agent ⇄ tools → ltm_write."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from graph.context import Context
from graph.lineage import acurrent_lineage, current_checkpoint_id, current_lineage
from graph.memory_access import (
    context_of,
    facade_for,
    is_under_langgraph_server,
    local_writer_for,
    open_manager,
    resolve_user_id,
)
from graph.models import load_chat_model
from graph.state import State
from graph.tools import CHAT_TOOLS
from memory.branch import Lineage, Provenance
from prompts.agent import (
    CORE_CONTEXT_BLOCKS,
    CORE_CONTEXT_LABELS,
    MEMORIES_BLOCKS,
    NO_MEMORIES,
    SYSTEM_PROMPTS,
    WEEKDAYS_ZH,
)

logger = logging.getLogger(__name__)

WRITER_GRAPH_ID = "memory_writer"
# uuid5 namespace of the per-user writer threads: one writer thread per user, same id everywhere.
WRITER_THREAD_NAMESPACE = uuid.UUID("6f1c2b0e-6a4e-5d3c-9b7e-0a6f3e5d2c11")


def message_text(message: AnyMessage) -> str:
    """The text of a message whether its content is a string or a list of parts."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)


def retrieve_memory(state: State, runtime: Runtime[Context]) -> dict:
    """Find the memories related to the latest user message that this branch of the
    conversation may read, and the user's core context (sync: the store's sync API is only
    allowed off the server's event loop)."""
    context = context_of(runtime.context)
    config = get_config()
    manager = open_manager(context, resolve_user_id(config, context), runtime.store)
    core_context = _read_core_context(manager)
    query = next(
        (message_text(m) for m in reversed(state.messages) if isinstance(m, HumanMessage)), ""
    )
    if not query.strip():
        return {"related_memories": [], "core_context": core_context}
    memories = facade_for(manager, context).get_related_memory_from(
        query,
        context.retrieval_mode,
        limit=context.retrieval_limit,
        lineage=current_lineage(config),
    )
    return {"related_memories": list(memories), "core_context": core_context}


def _read_core_context(manager: Any) -> dict[str, str]:
    try:
        return dict(manager.get_core_context())
    except Exception:  # like retrieval: a broken store never breaks the chat
        logger.exception("reading the core context of %r failed", manager.user_id)
        return {}


def format_memories(memories: list[dict[str, Any]], language: str) -> str:
    """The memories block: one line each, escaped so that memory text cannot close the fence."""
    if not memories:
        return NO_MEMORIES[language]
    lines = []
    for memory in memories:
        text = " ".join(str(memory.get("description", "")).split())
        theme = " ".join(str(memory.get("theme", "")).split())
        line = f"- [{theme}] {text}" if theme else f"- {text}"
        lines.append(line.replace("<", "&lt;").replace(">", "&gt;"))
    return MEMORIES_BLOCKS[language].format(items="\n".join(lines))


def current_time_text(language: str, now: datetime | None = None) -> str:
    """The local time with the weekday, in the prompt's language."""
    now = now or datetime.now().astimezone()
    if language == "zh":
        return f"{now:%Y-%m-%d %H:%M} {WEEKDAYS_ZH[now.weekday()]} (UTC{now:%z})"
    return f"{now:%A %Y-%m-%d %H:%M} (UTC{now:%z})"


def format_core_context(core_context: dict[str, str], language: str) -> str:
    """The core context block ("" before it is seeded), escaped like the memories."""
    labels = CORE_CONTEXT_LABELS[language]
    lines = []
    for key, label in labels.items():
        text = " ".join(str(core_context.get(key, "")).split())
        if text:
            lines.append(f"{label}: {text}".replace("<", "&lt;").replace(">", "&gt;"))
    return CORE_CONTEXT_BLOCKS[language].format(lines="\n".join(lines)) if lines else ""


def build_system_prompt(
    context: Context, memories: list[dict[str, Any]], core_context: dict[str, str] | None = None
) -> str:
    """The system prompt: `context.system_prompt` or the built-in one, placeholders filled.

    The core context block goes where `{core_context}` is; a prompt without that placeholder
    gets it at the end, so that it is always there once seeded.
    """
    template = context.system_prompt or SYSTEM_PROMPTS[context.language]
    block = format_core_context(core_context or {}, context.language)
    if "{core_context}" not in template:
        template = f"{template}\n\n{{core_context}}" if block else template
    elif not block:
        template = template.replace("{core_context}\n\n", "")
    # str.replace, not str.format: a user's own prompt may contain other braces.
    return (
        template.replace("{current_time}", current_time_text(context.language))
        .replace("{memories}", format_memories(memories, context.language))
        .replace("{core_context}", block)
    )


def agent(state: State, runtime: Runtime[Context]) -> dict:
    """Answer with the chat model; core context and memories in the system prompt, the chat
    tools bound."""
    context = context_of(runtime.context)
    model = load_chat_model(context.model).bind_tools(CHAT_TOOLS)
    prompt = build_system_prompt(context, state.related_memories, state.core_context)
    system = SystemMessage(content=prompt)
    response = model.invoke([system, *state.messages])
    return {"messages": [response]}


def route_after_agent(state: State) -> Literal["tools", "ltm_write"]:
    """Run the tools the model asked for, else finish the turn."""
    last = state.messages[-1] if state.messages else None
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "ltm_write"


def finished_turn(messages: list[AnyMessage]) -> tuple[HumanMessage | None, list[dict[str, str]]]:
    """The last user message and the assistant's text replies after it, as role/content dicts."""
    last_user_index = max(
        (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=None
    )
    if last_user_index is None:
        return None, []
    user = messages[last_user_index]
    assert isinstance(user, HumanMessage)
    turn = [{"role": "user", "content": message_text(user)}]
    for message in messages[last_user_index + 1 :]:
        if isinstance(message, AIMessage) and message_text(message).strip():
            turn.append({"role": "assistant", "content": message_text(message)})
    return user, turn


def writer_thread_id(user_id: str) -> str:
    """The user's background writer thread: deterministic, so every process finds the same one."""
    return str(uuid.uuid5(WRITER_THREAD_NAMESPACE, f"gulfstream-writer:{user_id}"))


def resolve_write_mode(context: Context, config: RunnableConfig, user_id: str) -> str:
    """`auto` → server under LangGraph, else local when a queue is registered, else inline."""
    if context.write_mode != "auto":
        return context.write_mode
    if is_under_langgraph_server(config):
        return "server"
    return "local" if local_writer_for(user_id) is not None else "inline"


async def ltm_write(state: State, runtime: Runtime[Context]) -> dict:
    """Hand the finished turn to the memory writer and return at once (except `inline`)."""
    context = context_of(runtime.context)
    config = get_config()
    user_message, turn = finished_turn(list(state.messages))
    if user_message is None:
        return {}
    user_id = resolve_user_id(config, context)
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "no-thread")
    checkpoint_id = current_checkpoint_id(config)
    # Stable and unique: a retried run re-sends the same id and the manager applies it once.
    # The checkpoint keeps apart two branches that answer the same user message (an edited
    # message keeps its id; a regenerated answer starts from the same message).
    turn_id = f"{thread_id}:{user_message.id or uuid.uuid4().hex}"
    turn_id += f"@{checkpoint_id}" if checkpoint_id else ""
    provenance = Provenance(thread_id=thread_id, checkpoint_id=checkpoint_id, turn_id=turn_id)
    lineage = await acurrent_lineage(config)
    scope_policy = context.memory_scope
    mode = resolve_write_mode(context, config, user_id)
    if mode == "server":
        await _schedule_server_write(
            context,
            user_id,
            turn_id,
            thread_id,
            turn,
            provenance=provenance,
            lineage=lineage,
            scope_policy=scope_policy,
        )
    elif mode == "local":
        writer = local_writer_for(user_id)
        if writer is None:
            raise RuntimeError(
                f"write_mode 'local' but no local write queue is registered for user {user_id!r}: "
                "use graph.chat / graph.demo, register one, or choose write_mode 'inline'"
            )
        await writer.send_history(
            turn,
            session_id=thread_id,
            turn_id=turn_id,
            provenance=provenance,
            lineage=lineage,
            scope_policy=scope_policy,
        )
    else:
        from graph.writer import write_turn

        await write_turn(
            context,
            user_id,
            turn_id,
            thread_id,
            turn,
            runtime.store,
            provenance=provenance,
            lineage=lineage,
            scope_policy=scope_policy,
        )
    logger.debug("turn %s handed to the %s writer", turn_id, mode)
    return {}


async def _schedule_server_write(
    context: Context,
    user_id: str,
    turn_id: str,
    session_id: str,
    turn: list[dict[str, str]],
    *,
    provenance: Provenance,
    lineage: Lineage | None,
    scope_policy: str,
) -> None:
    from langgraph_sdk import get_client

    client = get_client()  # in-process: reaches this server's API without a URL
    writer_thread = writer_thread_id(user_id)
    await client.threads.create(
        thread_id=writer_thread,
        if_exists="do_nothing",
        metadata={"gulfstream": "memory_writer", "user_id": user_id},
    )
    payload: dict[str, Any] = {
        "user_id": user_id,
        "turn_id": turn_id,
        "session_id": session_id,
        "messages": turn,
        "provenance": provenance.as_dict(),
        "lineage": lineage.as_dict() if lineage is not None else None,
        "scope_policy": scope_policy,
    }
    await client.runs.create(
        writer_thread,
        WRITER_GRAPH_ID,
        input=payload,
        context={
            "user_id": user_id,
            "model": context.model,
            "writer_model": context.writer_model,
            "memory_backend": context.memory_backend,
            "language": context.language,
        },
        after_seconds=context.write_delay_seconds,
        # enqueue: a turn arriving while an earlier one waits or runs is queued behind it,
        # never replaces it (the default strategy would reject or interrupt).
        multitask_strategy="enqueue",
    )
