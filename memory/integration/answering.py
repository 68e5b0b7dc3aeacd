"""The chat agent's answer: the chat model asked with the app's prompt and tools, within the prompt
budget, in a bounded tool loop (tool_loop.py); the reply and what it cost."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from memory.integration.prompt_budget import (
    budget_for,
    cut_on_sentence,
    fit_to_budget,
    latest_user_text,
    summary_limit,
)
from memory.integration.prompt_layout import ChatPrompt, request_messages, splits_prompt
from memory.integration.settings import get_settings
from memory.integration.tool_loop import (
    allowed_tool_rounds,
    answers_to_repeats,
    asked_without_tools,
    calls_written_as_text,
    invoke_once_more_on_error,
    is_empty_answer,
    tool_names,
    tool_rounds,
    without_echoed_tags,
    without_tool_calls,
)
from memory.prompts.chat_loop import EMPTY_ANSWER_NOTE, LAST_ROUND_NOTE, NO_WORDS
from memory.text.language import resolve_language
from memory.usage.counts import UsageMeter, added_cost
from memory.usage.metering import metered

logger = logging.getLogger(__name__)

# The app's system prompt for (state, context, language, names of the bound tools, the running
# summary as shown): what `answer` sends and compaction measures.
PromptFor = Callable[[Any, Any, str, Sequence[str], str], ChatPrompt]


def prompt_inputs(
    state: Any, context: Any, budget: int | None, summary: str | None = None
) -> tuple[str, str]:
    """The reply's language and the running summary as the prompt shows it: `summary` (None:
    the state's) cut to its limit under `budget`, so a summary kept before the limit existed
    never takes more; none without a budget (compaction off: only the compaction node keeps a
    summary clear of what the user forgot)."""
    language = resolve_language(context.language, latest_user_text(state.messages))
    text = str((state.summary or {}).get("text") or "") if summary is None else summary
    return language, cut_on_sentence(text, summary_limit(budget)) if budget is not None else ""


def answer(
    chat_model: Any, state: Any, context: Any, tools: Sequence[Any], prompt_for: PromptFor
) -> dict[str, Any]:
    """The agent node's update: the model's reply to the conversation in `state` (messages, and
    answers to repeated tool calls), with `tools` bound for at most GULFSTREAM_MAX_TOOL_ROUNDS
    rounds (GULFSTREAM_SMALL_MODEL_TOOL_ROUNDS on a small model), and the run's cost. Give
    `chat_model` without client retries: a failed call is retried once here, then the run fails
    with an error naming the provider's answer."""
    settings = get_settings()
    budget = budget_for(settings, chat_model)
    rounds = tool_rounds(state.messages)
    # At the limit (at once with GULFSTREAM_MAX_TOOL_ROUNDS=0) the model is asked without tools,
    # this turn's results folded into its prompt: with tool schemas in view a small model keeps
    # writing calls, without them it answers.
    last_round = rounds >= allowed_tool_rounds(settings, context.model)
    language, summary = prompt_inputs(state, context, budget)
    prompt = prompt_for(state, context, language, [] if last_round else tool_names(tools), summary)
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
        return {"messages": [with_sources(final, state)], "cost": cost}
    response = with_sources(without_echoed_tags(calls_written_as_text(response, tools)), state)
    repeats = answers_to_repeats(response, state.messages)
    if repeats:
        logger.info("the chat model repeated %d tool call(s): answered from the first results",
                    len(repeats))  # fmt: skip
    return {"messages": [response, *(repeats or [])], "cost": cost}


def with_sources(message: AIMessage, state: Any) -> AIMessage:
    """`message` with what it drew on in its `response_metadata`, kept with the reply in the
    thread (Studio and any client see it per message): `memory_ids`, the ids of the memories
    its prompt was given (standing instructions first, then those retrieval found), and
    `off_the_record` when the conversation is kept out of memory."""
    given = [*getattr(state, "standing_instructions", []), *state.related_memories]
    metadata = {**message.response_metadata, "memory_ids": [m["id"] for m in given]}
    if getattr(state, "private", False):
        metadata["off_the_record"] = True
    return message.model_copy(update={"response_metadata": metadata})
