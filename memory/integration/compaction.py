"""Compaction: when a turn's prompt would exceed the budget, the oldest turns leave the state for
a running summary, after the memory writer has been handed them."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.config import get_config
from langgraph.runtime import Runtime

from memory.integration.answering import PromptFor, prompt_inputs
from memory.integration.context import MemoryContext
from memory.integration.models.loading import load_chat_model
from memory.integration.prompt_budget import (
    CHARS_PER_TOKEN,
    budget_for,
    fit_to_budget,
    prompt_tokens,
    summary_limit,
)
from memory.integration.run_memory import RunMemory, open_run_memory
from memory.integration.settings import get_settings
from memory.integration.state import MemoryState
from memory.integration.summarizer import RunningSummary, summarize, without_forgotten
from memory.integration.tool_loop import tool_names
from memory.integration.writing.pending import waiting_in_thread
from memory.store.forgotten import forgotten_prints
from memory.text.fingerprint import Fingerprint
from memory.text.messages import text_of
from memory.usage.counts import UsageMeter, added_cost
from memory.usage.metering import metered
from memory.writer.local import local_writer

logger = logging.getLogger(__name__)

# After a compaction the prompt (system prompt, summary and the recent messages kept whole)
# takes about this share of the budget, so that the next turns add to it without compacting.
TARGET_SHARE = 0.6
MAX_COOLDOWN_SECONDS = 900.0
FLUSH_WAIT_SECONDS = 30.0


def choose_cutoff(messages: Sequence[AnyMessage], room: int, keep: int) -> int:
    """How many of the oldest messages to compact: the rest keeps at least `keep` messages and
    as many recent ones as fit in `room` tokens, and starts at a user message (a turn's start),
    so an AI message is never split from its tool results and the latest user message stays.
    0 when nothing can go."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if len(starts) < 2:
        return 0
    tail, index = 0, len(messages)
    while index > 0:
        cost = count_tokens_approximately([messages[index - 1]])
        if len(messages) - index >= keep and tail + cost > room:
            break
        tail += cost
        index -= 1
    earlier = [s for s in starts if s <= index]
    cutoff = earlier[-1] if earlier and earlier[-1] > 0 else next(s for s in starts if s > 0)
    return min(cutoff, starts[-1])


def compaction_node(
    prompt_for: PromptFor, tools_for: Callable[[], Sequence[Any]]
) -> Callable[..., dict[str, Any]]:
    """The `compact` node of a chat graph whose agent sends `prompt_for`'s prompt with the tools
    `tools_for()` binds: the running summary without what the user forgot since
    (`summary_without_forgotten`), then `compact`."""

    def compact_node(state: MemoryState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        # The summary leaves out what the user forgot before anything reads or extends it.
        redacted = summary_without_forgotten(state, runtime)
        if redacted:
            state = dataclasses.replace(state, summary=redacted["summary"])
        return {**redacted, **compact(state, runtime, prompt_for, tools_for())}

    compact_node.__name__ = "compact"
    return compact_node


def summary_without_forgotten(
    state: MemoryState, runtime: Runtime[MemoryContext]
) -> dict[str, Any]:
    """The state's update that rewrites the running summary without what carries a forgotten
    memory (or puts back what a restore brought back); `{}` when it needs no change."""
    if not state.summary:
        return {}
    run = open_run_memory(runtime, get_config())
    try:
        summary = without_forgotten(state.summary, forgotten_prints(run.memory.manager))
    except Exception:  # a store that cannot be read: retrieval will say so too
        logger.exception("checking the running summary for forgotten memories failed")
        return {}
    return {"summary": summary} if summary is not None else {}


def compact(
    state: MemoryState,
    runtime: Runtime[MemoryContext],
    prompt_for: PromptFor,
    tools: Sequence[Any] = (),
) -> dict[str, Any]:
    """Before the agent answers: when the prompt would exceed the budget, hand the thread's
    waiting turns to the memory writer, then fold the oldest turns into the running summary
    (bounded: a quarter of the budget, whatever the model answers) and take them out of the
    state (they stay in the archive and the earlier checkpoints). A failed summary never
    fails the turn: the agent trims instead, and the next attempt waits a cooldown.
    `compaction` then says what was done and the size of the prompt the agent will send,
    measured with the app's prompt (`prompt_for`, `tools` bound)."""
    context = runtime.context if runtime.context is not None else MemoryContext()
    settings = get_settings()
    budget = budget_for(settings, load_chat_model(context.model))
    if budget is None:
        return {}
    names = tool_names(tools)

    def system_prompt(summary: str | None) -> str:
        language, shown = prompt_inputs(state, context, budget, summary)
        return prompt_for(state, context, language, names, shown).whole

    system = system_prompt(None)
    messages = list(state.messages)
    used = prompt_tokens(system, messages)
    if used <= budget:
        return {}
    status = dict(state.compaction)
    now = time.time()
    if float(status.get("retry_after") or 0) > now:
        return {"compaction": outcome(status, "cooldown", system, messages, budget, used)}
    limit = summary_limit(budget)
    base = system_prompt("")
    room = int(budget * TARGET_SHARE) - prompt_tokens(base, []) - limit // CHARS_PER_TOKEN
    cutoff = choose_cutoff(messages, max(0, room), settings.compaction_keep_messages)
    if cutoff <= 0:
        return {"compaction": outcome(status, "nothing to compact", system, messages, budget, used)}
    span = messages[:cutoff]
    run = open_run_memory(runtime, get_config())
    flushed = flush_writer(run, runtime.store)
    previous = RunningSummary.from_dict(state.summary)
    meter = UsageMeter()
    model = load_chat_model(context.model, timeout=settings.writer_timeout_seconds, max_retries=0)
    # What carries a forgotten memory is not summarised again (it still leaves the state).
    told = without_forgotten_messages(span, forgotten_prints(run.memory.manager))
    try:
        with metered(meter, "summary"):
            made = summarize(model, previous, told, limit)
    except Exception as exc:
        failures = int(status.get("failures") or 0) + 1
        wait = min(MAX_COOLDOWN_SECONDS, settings.compaction_cooldown_seconds * 2 ** (failures - 1))
        logger.warning("compaction of thread %s failed (%s); trimming, next try in %.0f s",
                       run.thread_id, exc, wait)  # fmt: skip
        failed = {"failures": failures, "retry_after": now + wait,
                  "error": f"{type(exc).__name__}: {exc}"}  # fmt: skip
        report = outcome(failed, "failed", system, messages, budget, used)
        return {"compaction": report, "cost": added_cost(state.cost, meter)}
    summary = previous.extended(made.text, span)
    logger.info("compacted %d messages of thread %s (%d tokens over a budget of %d; %d turns "
                "flushed to the writer)", cutoff, run.thread_id, used, budget, flushed)  # fmt: skip
    after = system_prompt(summary.text)
    done = {"failures": 0, "retry_after": 0, "error": "", "compacted": cutoff,
            "summary_chars": len(summary.text), "summary_limit": limit,
            "summary_bounded": made.how}  # fmt: skip
    return {
        "messages": [RemoveMessage(id=m.id) for m in span if m.id],
        "summary": summary.to_dict(),
        "compaction": outcome(done, "compacted", after, messages[cutoff:], budget, used),
        "cost": added_cost(state.cost, meter),
    }


def outcome(
    fields: dict[str, Any],
    action: str,
    system: str,
    messages: Sequence[AnyMessage],
    budget: int,
    before: int,
) -> dict[str, Any]:
    """What `state["compaction"]` says: the `action` taken, the prompt's size before it and the
    size of what the agent will send after it (`prompt_tokens`, the trim included), and a
    status that is the action, or `over_budget` with the `reason` when that still exceeds
    the budget."""
    sent = fit_to_budget(system, messages, budget)
    tokens = prompt_tokens(system, sent)
    report = {**fields, "action": action, "status": action, "reason": "", "budget": budget,
              "prompt_tokens": tokens, "prompt_tokens_before": before}  # fmt: skip
    if tokens > budget:
        alone = prompt_tokens(system, [])
        report["status"] = "over_budget"
        report["reason"] = (
            f"the system prompt alone (memories, core context, summary) is {alone} tokens"
            if alone > budget
            else f"the latest turn is sent whole: {tokens - alone} tokens"
        )
    return report


def without_forgotten_messages(
    span: Sequence[AnyMessage], prints: Mapping[str, Fingerprint]
) -> list[AnyMessage]:
    """The span without the messages that carry a forgotten memory."""
    return [m for m in span if not any(p.carries(text_of(m.content)) for p in prints.values())]


def flush_writer(run: RunMemory, store: Any) -> int:
    """Hand the thread's turns waiting in a batch to the memory writer now, through the usual
    durable path (exactly once: turn ids): the local queue's batch, or on the server the
    turns kept in the store, written by a memory_writer run told to flush this thread."""
    from memory.integration.writing.server_runs import schedule_flush, write_mode

    mode = write_mode(run)
    try:
        if mode == "local":
            return int(local_writer.flush(run.memory, run.thread_id).result(FLUSH_WAIT_SECONDS))
        if mode == "server" and store is not None:
            waiting = waiting_in_thread(store, run.user_id, run.thread_id)
            if waiting:
                local_writer.run(schedule_flush(run)).result(FLUSH_WAIT_SECONDS)
            return waiting
    except Exception:
        # The turns stay durable where they wait (journal or store): their batch still comes.
        logger.exception("flushing the memory writer before compaction of %s failed",
                         run.thread_id)  # fmt: skip
    return 0
