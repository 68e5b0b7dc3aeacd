"""The nodes of the chat graph: retrieve_memory → agent ⇄ tools (ltm_write: graph/writing/)."""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from graph.archive.archiving import forget_in_run_archive  # feature: archive
from graph.context import Context
from graph.lineage import current_lineage
from graph.models.loading import load_chat_model
from graph.prompt_budget import budget_for, chat_prompt, fit_to_budget, latest_user_text
from graph.prompting import request_messages, splits_prompt
from graph.run_memory import RunMemory, open_run_memory
from graph.settings import get_settings
from graph.state import State
from graph.summarizer import without_forgotten
from graph.tool_loop import (
    allowed_tool_rounds,
    answers_to_repeats,
    asked_without_tools,
    calls_written_as_text,
    invoke_once_more_on_error,
    is_empty_answer,
    tool_rounds,
    without_echoed_tags,
    without_tool_calls,
)
from graph.tools import chat_tools, tool_names
from graph.writing.said_recently import said_recently
from memory.store.forgotten import forgotten_prints
from memory.usage.counts import UsageMeter, add_up, as_dicts, from_dicts
from memory.usage.metering import metered
from prompts.agent import EMPTY_ANSWER_NOTE, LAST_ROUND_NOTE, NO_WORDS

logger = logging.getLogger(__name__)


def retrieve_memory(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
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


def forget_before_reading(run: RunMemory, state: State) -> dict[str, Any]:
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


def agent(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Answer with the chat model; core context and memories in the system prompt, the chat
    tools bound for at most GULFSTREAM_MAX_TOOL_ROUNDS rounds, GULFSTREAM_SMALL_MODEL_TOOL_ROUNDS
    on a small model (graph/tool_loop.py)."""
    context = runtime.context if runtime.context is not None else Context()
    settings = get_settings()
    # No client retries: invoke_once_more_on_error is the one retry, then an error naming the
    # provider's answer (the client's two on top made a failing local server answer six times).
    chat_model = load_chat_model(context.model, max_retries=0)
    tools = chat_tools(settings)  # only those of the features that are on
    budget = budget_for(settings, chat_model)
    rounds = tool_rounds(state.messages)
    # At the limit (at once with GULFSTREAM_MAX_TOOL_ROUNDS=0) the model is asked without tools,
    # this turn's results folded into its prompt: with tool schemas in view a small model keeps
    # writing calls, without them it answers.
    last_round = rounds >= allowed_tool_rounds(settings, context.model)
    prompt = chat_prompt(state, context, () if last_round else tool_names(tools), budget)
    # Within the budget: compaction keeps the state small; this trims when it could not (a
    # failed summary, a cooldown, one turn larger than the budget).
    sent = fit_to_budget(prompt.whole, state.messages, budget)
    split = splits_prompt(context.model, settings.prompt_layout)
    last_note = LAST_ROUND_NOTE.format(rounds=rounds) if last_round and rounds else ""
    model: Any = chat_model if last_round else chat_model.bind_tools(tools)
    request = (
        asked_without_tools(prompt, sent, split, last_note)
        if last_round
        else request_messages(prompt, sent, split)
    )
    meter = UsageMeter()
    with metered(meter, "chat"):
        response = invoke_once_more_on_error(model, request, context.model)
        if is_empty_answer(response) and not last_round:  # end-of-text after a tool result
            nudged = request_messages(prompt, sent, split, EMPTY_ANSWER_NOTE)
            response = invoke_once_more_on_error(model, nudged, context.model)
        if is_empty_answer(response):  # still nothing: no tools, this turn's results in the prompt
            request = asked_without_tools(prompt, sent, split, last_note + EMPTY_ANSWER_NOTE)
            response = invoke_once_more_on_error(chat_model, request, context.model)
        if is_empty_answer(response):  # never a blank reply: say that it failed
            response = AIMessage(NO_WORDS, id=response.id, usage_metadata=response.usage_metadata)
    cost = add_up(from_dicts(state.cost), meter.by_purpose())
    if last_round:
        final = without_echoed_tags(without_tool_calls(response, tools))
        return {"messages": [final], "cost": as_dicts(cost)}
    response = without_echoed_tags(calls_written_as_text(response, tools))
    repeats = answers_to_repeats(response, state.messages)
    if repeats:
        logger.info("the chat model repeated %d tool call(s): answered from the first results",
                    len(repeats))  # fmt: skip
    return {"messages": [response, *(repeats or [])], "cost": as_dicts(cost)}


def route_after_agent(state: State) -> Literal["tools", "agent", "ltm_write"]:
    """Run the tools the model asked for; back to the model when its repeated calls were
    answered from earlier results; else finish the turn."""
    last = state.messages[-1] if state.messages else None
    if isinstance(last, ToolMessage):
        return "agent"
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "ltm_write"
