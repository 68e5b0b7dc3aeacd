"""Which user a run serves, that user's memory manager, and the cached LongTermMemory facade."""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.context import Context
from memory.factory import get_memory_manager
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager

# Store namespace of the server writer's failed turns, laid out like the memory namespaces
# (kind, user label), so graph/auth.py's rule "the second label is yours" covers it.
DEAD_WRITES_NAMESPACE = "memories_dead"
STUDIO_REFUSED = (
    "the LangGraph Studio user cannot choose whose memories to use on a server with custom "
    'auth: set "disable_studio_auth": true in langgraph.json and sign in with a token'
)

_facades: dict[tuple[int, str | None], LongTermMemory] = {}


def context_of(runtime_context: Context | None) -> Context:
    """The run's context; a run started without one gets the defaults (and GULFSTREAM_* env)."""
    return runtime_context if runtime_context is not None else Context()


def custom_auth_configured() -> bool:
    """True inside the LangGraph server with an `auth` section in langgraph.json (as
    webapp/guard.py decides it)."""
    if "langgraph_api" not in sys.modules:
        return False
    try:
        from langgraph_api import config
    except ImportError:  # pragma: no cover - present whenever it is in sys.modules
        return False
    return bool(getattr(config, "LANGGRAPH_AUTH", None))


def is_studio_user(user: Any) -> bool:
    """LangGraph Studio's shared user (an object, or its serialized form with a `kind`)."""
    if isinstance(user, dict):
        return user.get("kind") == "StudioUser"
    return type(user).__name__ == "StudioUser" or getattr(user, "kind", None) == "StudioUser"


def resolve_user_id(config: RunnableConfig | None, context: Context) -> str:
    """The authenticated user when the server has custom auth, else `context.user_id`.

    The server puts the authenticated user in `configurable` and strips any client attempt to
    set it. With custom auth, Studio's shared user is nobody: it may not pick a user through the
    context (PermissionError). Without custom auth Studio is the local developer, and
    `context.user_id` applies.
    """
    configurable = (config or {}).get("configurable") or {}
    auth_user = configurable.get("langgraph_auth_user")
    auth_user_id = configurable.get("langgraph_auth_user_id")
    if auth_user is not None and is_studio_user(auth_user):
        if custom_auth_configured():
            raise PermissionError(STUDIO_REFUSED)
        return context.user_id
    if auth_user is not None and auth_user_id and getattr(auth_user, "is_authenticated", True):
        return str(auth_user_id)
    return context.user_id


def open_manager(context: Context, user_id: str, store: Any | None) -> BaseMemoryManager:
    """The user's manager; the `store` backend uses the server's (or the compiled graph's) store."""
    return get_memory_manager(context.memory_backend, user_id, store=store)


def facade_for(manager: BaseMemoryManager, context: Context) -> LongTermMemory:
    """One facade per (manager, ranking model), so that retrieval indexes built on it are reused.

    The key holds the model only when `retrieval_mode` uses one: a mechanical run and an `llm`
    run of the same user get different facades, so switching the mode takes effect at once.
    """
    wants_llm = context.retrieval_mode != "mechanical"
    key = (id(manager), context.model if wants_llm else None)
    facade = _facades.get(key)
    if facade is None or facade.manager is not manager:
        llm = None
        if wants_llm:
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
