"""Which user a run serves, that user's memory manager, and the cached LongTermMemory facade."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.context import Context
from memory.factory import get_memory_manager
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager

_facades: dict[tuple[int, str], LongTermMemory] = {}


def context_of(runtime_context: Context | None) -> Context:
    """The run's context; a run started without one gets the defaults (and GULFSTREAM_* env)."""
    return runtime_context if runtime_context is not None else Context()


def resolve_user_id(config: RunnableConfig | None, context: Context) -> str:
    """The authenticated user when the server has custom auth, else `context.user_id`.

    The server puts the authenticated user in `configurable` and strips any client attempt to
    set it. Studio's built-in user and anonymous requests are not an identity of their own.
    """
    configurable = (config or {}).get("configurable") or {}
    auth_user = configurable.get("langgraph_auth_user")
    auth_user_id = configurable.get("langgraph_auth_user_id")
    if (
        auth_user is not None
        and auth_user_id
        and getattr(auth_user, "is_authenticated", True)
        and type(auth_user).__name__ != "StudioUser"
    ):
        return str(auth_user_id)
    return context.user_id


def open_manager(context: Context, user_id: str, store: Any | None) -> BaseMemoryManager:
    """The user's manager; the `store` backend uses the server's (or the compiled graph's) store."""
    return get_memory_manager(context.memory_backend, user_id, store=store)


def facade_for(manager: BaseMemoryManager, context: Context) -> LongTermMemory:
    """One facade per (manager, model), so that retrieval indexes built on it are reused."""
    key = (id(manager), context.model)
    facade = _facades.get(key)
    if facade is None or facade.manager is not manager:
        llm = None
        if context.retrieval_mode != "mechanical":
            from graph.models import load_chat_model
            from graph.offline_model import OfflineChatModel

            llm = load_chat_model(context.model)
            # The offline model cannot rank memories; without an LLM the facade runs BM25.
            llm = None if isinstance(llm, OfflineChatModel) else llm
        facade = LongTermMemory(manager, llm=llm)
        _facades[key] = facade
    return facade


def is_under_langgraph_server(config: RunnableConfig | None) -> bool:
    """True inside a run of the LangGraph API server, which tags every run's metadata."""
    metadata = (config or {}).get("metadata") or {}
    return "langgraph_api_version" in metadata


# The local write queue of this process (started by `graph.chat` / `graph.demo`), per user.
_local_writers: dict[str, LongTermMemory] = {}


def register_local_writer(user_id: str, facade: LongTermMemory) -> None:
    """Make `ltm_write` hand this user's turns to `facade.send_history` (its started queue)."""
    _local_writers[user_id] = facade


def unregister_local_writer(user_id: str) -> None:
    """Stop routing this user's turns to a local queue (call before `await facade.stop()`)."""
    _local_writers.pop(user_id, None)


def local_writer_for(user_id: str) -> LongTermMemory | None:
    """The registered local queue of this user, if any."""
    return _local_writers.get(user_id)
