"""The chat agent node: answer with the chat model and its tools, memories in the system prompt."""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from graph.context import Context
from graph.prompting import chat_prompt, request_messages, splits_prompt
from graph.state import State
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
from memory.integration import (
    UsageMeter,
    added_cost,
    budget_for,
    fit_to_budget,
    get_settings,
    load_chat_model,
    metered,
)
from prompts.agent import EMPTY_ANSWER_NOTE, LAST_ROUND_NOTE, NO_WORDS

logger = logging.getLogger(__name__)


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
    cost = added_cost(state.cost, meter)
    if last_round:
        final = without_echoed_tags(without_tool_calls(response, tools))
        return {"messages": [final], "cost": cost}
    response = without_echoed_tags(calls_written_as_text(response, tools))
    repeats = answers_to_repeats(response, state.messages)
    if repeats:
        logger.info("the chat model repeated %d tool call(s): answered from the first results",
                    len(repeats))  # fmt: skip
    return {"messages": [response, *(repeats or [])], "cost": cost}


def route_after_agent(state: State) -> Literal["tools", "agent", "ltm_write"]:
    """Run the tools the model asked for; back to the model when its repeated calls were
    answered from earlier results; else finish the turn."""
    last = state.messages[-1] if state.messages else None
    if isinstance(last, ToolMessage):
        return "agent"
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "ltm_write"
