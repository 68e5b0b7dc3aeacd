"""The one door from a run to its user's memory: who the user is, their LongTermMemory, the
run's place in the conversation tree, and the finished turn to hand to the writer."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, overload

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from memory.integration.app_text import current_app_text
from memory.integration.archive_location import existing_archive  # feature: archive
from memory.integration.context import MemoryContext
from memory.integration.lineage import (
    checkpoint_is_saved,
    current_checkpoint_id,
    current_lineage,
)
from memory.integration.models.embeddings import deployment_embeddings
from memory.integration.models.loading import (
    check_model_allowed,
    check_run_models,
    is_offline,
    load_chat_model,
)
from memory.integration.settings import (
    Settings,
    custom_auth_configured,
    get_settings,
    is_studio_user,
)
from memory.long_term import LongTermMemory
from memory.registry import registry
from memory.store.branch import Lineage
from memory.store.factory import has_stored_memory
from memory.text.messages import extract_last_turn, preceding_exchange
from memory.writer import protocols
from memory.writer.consumer import MemoryConsumer
from memory.writer.timeouts import scaled_timeout
from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

# Store namespace of the server writer's failed turns, laid out like the memory namespaces
# (kind, user label), so memory/integration/auth.py's rule "the second label is yours" covers it.
DEAD_WRITES_NAMESPACE = "memories_dead"
STUDIO_REFUSED = (
    "the LangGraph Studio user cannot choose whose memories to use on a server with custom "
    'auth: set "disable_studio_auth": true in langgraph.json and sign in with a token'
)
NO_THREAD = "no-thread"
_told_unsaved_origin = False


@dataclass
class RunMemory:
    """What one node of one run needs of the user's memory: `RunMemory.open(runtime)`."""

    settings: Settings
    context: MemoryContext
    user_id: str
    thread_id: str  # "" without a thread
    checkpoint_id: str  # "" without a checkpointer
    memory: LongTermMemory
    config: RunnableConfig = field(repr=False)

    @staticmethod
    def open(
        runtime: Runtime[MemoryContext] | None = None,
        config: RunnableConfig | None = None,
        *,
        user_id: str | None = None,
    ) -> RunMemory:
        """The run's memory (`open_run_memory`): the user the run is for, the deployment's
        settings, the run's context, thread and checkpoint."""
        return open_run_memory(runtime, config, user_id=user_id)

    def ranking_model(self) -> Any | None:
        """The model that picks memories in the LLM retrieval modes (None in `mechanical`, and
        for the offline model, which never ranks)."""
        if self.context.retrieval_mode == "mechanical":
            return None
        model = load_chat_model(self.context.model)
        return None if is_offline(model) else model

    def lineage(self) -> Lineage | None:
        """The run's place in the conversation tree: the checkpoints this branch descends from
        (None without a checkpointer); what it may read is filtered by it."""
        return current_lineage(self.config)

    def core_context(self) -> dict[str, str]:
        """The user's core context with this thread's goal (`{}` until seeded)."""
        return self.memory.get_core_context(self.thread_id or None)

    def finished_turn(self, messages: Sequence[Any], lineage: Lineage | None) -> Turn | None:
        """The turn to write: the last user message and the replies after it, with a stable id,
        where it was said and the `lineage` it descends from (`run.lineage()`),
        and the exchange before it as context. None when there is no user message."""
        said, message_id = extract_last_turn(messages)
        if not said or said[0]["role"] != "user":
            return None
        thread_id = self.thread_id or NO_THREAD
        # Stable and unique: a retried run sends the same id and the manager applies it once.
        # The checkpoint keeps apart two branches that answer the same user message (an edited
        # message keeps its id; a regenerated answer starts from the same message).
        turn_id = f"{thread_id}:{message_id or uuid.uuid4().hex}"
        turn_id += f"@{self.checkpoint_id}" if self.checkpoint_id else ""
        return Turn(
            self.user_id, turn_id, tuple(said),
            thread_id=thread_id, checkpoint_id=self.checkpoint_id, lineage=lineage,
            scope_policy=self._scope_policy(lineage), language=self.context.language,
            writer_model=self.context.writer_model, context=tuple(preceding_exchange(messages)),
            said_at=self.context.now, timezone=self.context.timezone,
        )  # fmt: skip

    def _scope_policy(self, lineage: Lineage | None) -> str:
        """The run's `memory_scope`, except that a turn whose checkpoint is not saved
        (durability "exit", or a saver too slow to have it) writes user scope: a branch memory
        is visible only below its checkpoint, and no run descends from an unsaved one."""
        global _told_unsaved_origin
        policy = self.context.memory_scope
        saved = checkpoint_is_saved(self.thread_id, self.checkpoint_id)
        if lineage is None or not self.checkpoint_id or saved:
            return policy
        if policy != "user" and not _told_unsaved_origin:
            _told_unsaved_origin = True  # once per process: every such run would say the same
            logger.warning(
                "checkpoint %s of thread %s is not saved (durability='exit'?): this turn's "
                "memories, and those of later such turns, are written with user scope, because "
                "a branch memory needs a saved checkpoint for any run to see it",
                self.checkpoint_id,
                self.thread_id,
            )
        return "user"


def open_run_memory(
    runtime: Runtime[MemoryContext] | None = None,
    config: RunnableConfig | None = None,
    *,
    user_id: str | None = None,
) -> RunMemory:
    """The run's memory, from the runtime (context, store) and config (thread, checkpoint,
    authenticated user). `user_id` claims a user instead of `context.user_id`; custom auth
    overrides either. Sync: it may open files or databases, so async nodes call it in a thread.
    """
    config = config if config is not None else get_config()
    context = (
        runtime.context if runtime is not None and runtime.context is not None else MemoryContext()
    )
    if user_id is not None:
        context = dataclasses.replace(context, user_id=user_id)
    settings = get_settings()
    custom_auth = custom_auth_configured()
    for name in ("model", "writer_model"):
        check_model_allowed(name, getattr(context, name), settings, custom_auth)
    check_run_models(context)  # a missing package or key fails the run here, named
    user = resolve_user_id(config, context)
    memory = open_user_memory(user, runtime.store if runtime is not None else None)
    configurable = config.get("configurable") or {}
    thread_id = str(configurable.get("thread_id") or "")
    return RunMemory(
        settings, context, user, thread_id, current_checkpoint_id(config), memory, config
    )


@overload
def open_user_memory(
    user_id: str, store: Any | None = None, *, create: Literal[True] = True
) -> LongTermMemory: ...
@overload
def open_user_memory(
    user_id: str, store: Any | None = None, *, create: bool
) -> LongTermMemory | None: ...
def open_user_memory(
    user_id: str, store: Any | None = None, *, create: bool = True
) -> LongTermMemory | None:
    """`user_id`'s memory on the deployment's backend, set up as its settings say (the same
    object every run, the editor and MCP of this process share). `store` is the LangGraph
    store the `store` backend lives in. With `create=False`, None when nothing of the user is
    stored (and nothing was opened or created to find out)."""
    settings = get_settings()
    spec = settings.memory_backend
    opened = registry.peek(spec, user_id, store) is not None
    if not create and not opened and not has_stored_memory(spec, user_id, store):
        return None
    memory = registry.open(
        spec,
        user_id,
        store,
        default_data_dir=settings.data_dir,
        snapshot_delay=settings.snapshot_seconds,
        embeddings=deployment_embeddings(),
        shared_database=settings.shared_database,
    )
    return with_deployment_settings(memory, settings)


def with_deployment_settings(memory: LongTermMemory, settings: Settings) -> LongTermMemory:
    """`memory` set up as the deployment's settings say (every door to it: runs, the MCP
    server): its batching, hotness half-life, score floor, sections and topic routing."""
    memory.batching = settings.batch_policy()  # the deployment's, for the local queue
    memory.half_life_days = settings.hotness_half_life_days  # the deployment's, like batching
    memory.min_score = settings.min_score
    memory.retrievers.sections = (
        current_app_text().sections
    )  # the LLM retriever's examples name them
    memory.retrievers.topic_routing = settings.topics  # feature: topics
    memory.find_archive = partial(existing_archive, memory.user_id, settings)  # feature: archive
    return memory


_consumers: dict[Settings, MemoryConsumer] = {}
PROTOCOL_CHOICES_FILE = "writer_protocols.json"
CLIENT_PROMPT_TOKENS = 8_000  # the longest writer prompt the client's time limit allows for


def writer_consumer() -> MemoryConsumer:
    """The memory agent every write mode uses: the turn's writer model, loaded on its first
    turn with the deployment's timeout, and no client-side retries (the queue retries)."""
    settings = get_settings()
    consumer = _consumers.get(settings)
    if consumer is None:
        timeout = settings.writer_timeout_seconds
        rate = settings.writer_prefill_tokens_per_second

        def load_writer_model(name: str) -> Any:
            # A turn queued without a writer model (LongTermMemory.send_history) gets the
            # deployment's default one.
            name = name or MemoryContext().writer_model  # GULFSTREAM_WRITER_MODEL, else the model
            # The client's own limit is that of the longest prompt: the consumer cuts each turn
            # at a limit that grows with its own prompt, so a slow local model is not cut off.
            longest = scaled_timeout(timeout, CLIENT_PROMPT_TOKENS, rate=rate)
            return load_chat_model(name, timeout=longest, max_retries=0)

        # A model seen writing tool calls as text starts the next process on json too.
        protocols.remember_in(Path(settings.data_dir) / PROTOCOL_CHOICES_FILE)
        consumer = MemoryConsumer(
            model_factory=load_writer_model,
            timeout_seconds=4 * timeout,
            capacity=settings.memory_capacity,
            protocol=settings.writer_protocol,
            step_limit=max(2, 2 * settings.max_tool_rounds),
            prefill_tokens_per_second=rate,
            sections=current_app_text().sections,  # the fork's sections, with their kinds
            instructions=current_app_text().writer_instructions,  # what the fork's writer keeps
        )
        _consumers.clear()  # settings change only in tests and the demo
        _consumers[settings] = consumer
    return consumer


def resolve_user_id(config: RunnableConfig | None, context: MemoryContext) -> str:
    """The authenticated user when the server has custom auth, else `context.user_id`.

    The server puts the authenticated user in `configurable` and strips any client attempt to
    set it. With custom auth, Studio's shared user is nobody: it may not pick a user through the
    context (PermissionError). Without custom auth Studio is the local developer.
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


def is_under_langgraph_server(config: RunnableConfig | None) -> bool:
    """True inside a run of the LangGraph API server, which tags every run's metadata."""
    metadata = (config or {}).get("metadata") or {}
    return "langgraph_api_version" in metadata
