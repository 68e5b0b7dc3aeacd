"""retrieve_memory, the chat graph's first node: the memories this turn's branch may read, the core
context and what the user said that the writer has not filed yet."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from memory.integration.conversations.archiving import forget_in_run_archive  # feature: archive
from memory.integration.lineage import current_lineage
from memory.integration.prompt_budget import latest_user_text
from memory.integration.run_memory import RunMemory, open_run_memory
from memory.integration.state import MemoryState
from memory.integration.summarizer import without_forgotten
from memory.integration.writing.said_recently import said_recently
from memory.store.forgotten import forgotten_prints
from memory.usage.counts import UsageMeter, as_dicts
from memory.usage.metering import metered

logger = logging.getLogger(__name__)


def retrieve_memory(state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
    """The memories related to the latest user message that this branch of the conversation
    may read, and the user's core context. Sync (it runs in a worker thread): stores and files
    are read with blocking calls, which the server forbids on its event loop."""
    run = open_run_memory(runtime)
    forgotten = forget_before_reading(run, state)  # what the user forgot leaves first
    core_context = run.core_context()
    query = latest_user_text(state.messages)
    if not query.strip():
        return {"related_memories": [], "core_context": core_context, "cost": {},
                "user_id": run.user_id, "said_recently": [], **forgotten}  # fmt: skip
    lineage = current_lineage(run.config)
    revision = run.memory.manager.change_token()  # what the memories below are read from
    meter = UsageMeter()  # the first node of a run: the run's cost starts here
    with metered(meter, "retrieval"):  # a model call only in the llm and hybrid modes
        memories = run.memory.get_related_memory_from(
            query,
            run.context.retrieval_mode,
            run.context.retrieval_limit,
            lineage,
            llm=run.ranking_model(),
        )
    # What the user said that the writer has not filed yet (no model call, a few ms).
    said = said_recently(run, runtime.store, query, lineage, since=revision)
    try:  # only queued here: the recall log is written in a batch, off the reply path
        run.memory.record_recall([memory["id"] for memory in memories], query)
    except Exception:  # a hotness signal is never worth a failed reply
        logger.exception("recording the recall of %d memories failed", len(memories))
    cost = as_dicts(meter.by_purpose())
    return {
        "related_memories": memories, "core_context": core_context, "cost": cost,
        "user_id": run.user_id, "said_recently": said, **forgotten,
    }  # fmt: skip


def forget_before_reading(run: RunMemory, state: MemoryState) -> dict[str, Any]:
    """Bring the archive in step with what the user forgot or restored, and the state's update
    that rewrites the running summary without what carries a forgotten memory (or puts back
    what a restore brought back); `{}` when the summary needs no change."""
    forget_in_run_archive(run)  # feature: archive
    if not state.summary:
        return {}
    try:
        summary = without_forgotten(state.summary, forgotten_prints(run.memory.manager))
    except Exception:  # a store that cannot be read: retrieval will say so too
        logger.exception("checking the running summary for forgotten memories failed")
        return {}
    return {"summary": summary} if summary is not None else {}
