"""retrieve_memory, the chat graph's first node: the memories this turn's branch may read, the core
context, what the user said that the writer has not filed yet and what is planned soon."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from memory.integration.app_text import current_app_text
from memory.integration.prompt_budget import latest_user_text
from memory.integration.run_memory import open_run_memory
from memory.integration.state import MemoryState
from memory.integration.writing.said_recently import said_recently
from memory.text.off_record import asks_off_the_record, asks_to_forget_last_turn
from memory.usage.counts import UsageMeter, as_dicts
from memory.usage.metering import metered

logger = logging.getLogger(__name__)
# "Briefly": the soonest few plans, not the week's whole calendar.
COMING_UP_LINES = 3


def retrieve_memory(state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any]:
    """The memories related to the latest user message that this branch of the conversation
    may read, and the user's core context; it only reads (and notes the recall). What a forget
    changes elsewhere is settled where it is read: the archive by whoever searches it, the running
    summary by the compaction node. Sync (it runs in a worker thread): stores and files are read
    with blocking calls, which the server forbids on its event loop."""
    run = open_run_memory(runtime)
    core_context = run.core_context()
    # How the user wants to be answered holds for every reply, whatever this one is about.
    instructions = run.memory.standing_instructions(current_app_text().instruction_themes())
    query = latest_user_text(state.messages)
    # Off the record for the rest of the thread, once asked (by the run or the user).
    private = state.private or not run.context.remember or asks_off_the_record(query)
    # What this turn takes back: the thread's earlier turns when it turns private now, the
    # previous turn when the user asks to forget what they just said.
    said_before = sum(isinstance(m, HumanMessage) for m in state.messages) > 1 or state.summary
    take_back = "thread" if private and not state.private and said_before else ""
    if not private and asks_to_forget_last_turn(query):
        take_back = "turn"
    if not query.strip():
        return {"related_memories": [], "core_context": core_context, "cost": {},
                "user_id": run.user_id, "said_recently": [],
                "standing_instructions": instructions, "private": private,
                "take_back": take_back, "coming_up": []}  # fmt: skip
    lineage = run.lineage()
    now = run.context.moment()  # the run's "today", in the user's zone
    revision = run.memory.manager.change_token()  # what the memories below are read from
    meter = UsageMeter()  # the first node of a run: the run's cost starts here
    with metered(meter, "retrieval"):  # a model call only in the llm and hybrid modes
        memories = run.memory.get_related_memory_from(
            query,
            run.context.retrieval_mode,
            run.context.retrieval_limit,
            lineage,
            llm=run.ranking_model(),
            now=now,
        )
    shown = {instruction["id"] for instruction in instructions}  # once in the prompt
    memories = [memory for memory in memories if memory["id"] not in shown]
    window = run.settings.coming_up_days  # unasked: what is planned for the next days
    coming = run.memory.coming_up(now, window, COMING_UP_LINES, lineage) if window >= 0 else []
    # What the user said that the writer has not filed yet (no model call, a few ms).
    said = said_recently(run, runtime.store, query, lineage, since=revision)
    try:  # only queued here: the recall log is written in a batch, off the reply path
        if not private and not take_back:  # the log keeps a hash of the query's words
            run.memory.record_recall([memory["id"] for memory in memories], query)
    except Exception:  # a hotness signal is never worth a failed reply
        logger.exception("recording the recall of %d memories failed", len(memories))
    cost = as_dicts(meter.by_purpose())
    return {
        "related_memories": memories, "core_context": core_context, "cost": cost,
        "user_id": run.user_id, "said_recently": said, "standing_instructions": instructions,
        "private": private, "take_back": take_back, "coming_up": coming,
    }  # fmt: skip
