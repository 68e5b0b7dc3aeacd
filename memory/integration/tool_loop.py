"""The chat agent's model call and its tool loop, bounded: a few tool rounds per turn, a repeated
identical call answered from its first result, one answer without tools after the last round,
and a provider error retried once before the run fails with the provider's answer."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langgraph.errors import GraphBubbleUp

from memory.integration.prompt_layout import ChatPrompt, request_messages
from memory.integration.settings import Settings
from memory.prompts.chat_loop import NO_ANSWER, REPEATED_CALL_NOTE, TOOL_RESULTS_NOTE
from memory.writer.protocols import is_small_model
from memory.writer.text_calls import parse_text_tool_calls

logger = logging.getLogger(__name__)


class ChatModelError(RuntimeError):
    """The chat model failed twice; the message names the model and the provider's answer."""


def allowed_tool_rounds(settings: Settings, model: str) -> int:
    """The chat's tool rounds per turn on `model`: GULFSTREAM_SMALL_MODEL_TOOL_ROUNDS for a
    model whose name says it is small (as the writer's protocol is chosen), else
    GULFSTREAM_MAX_TOOL_ROUNDS."""
    return settings.small_model_tool_rounds if is_small_model(model) else settings.max_tool_rounds


def this_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the latest user message: this turn's tool rounds."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index + 1 :])
    return list(messages)


def tool_names(tools: Sequence[Any]) -> list[str]:
    """The names the model knows the tools by (a LangChain tool's `name`, a function's own)."""
    return [str(getattr(tool, "name", None) or getattr(tool, "__name__", "")) for tool in tools]


def tool_rounds(messages: Sequence[BaseMessage]) -> int:
    """How many times the model asked for tools in this turn."""
    return sum(1 for m in this_turn(messages) if isinstance(m, AIMessage) and m.tool_calls)


def _key(call: Mapping[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("args")], sort_keys=True, default=str)


def answers_to_repeats(
    response: AIMessage, messages: Sequence[BaseMessage]
) -> list[ToolMessage] | None:
    """When every call in `response` repeats one made earlier in this turn (same name, same
    arguments): the earlier results, with a note, as this response's tool answers. None when a
    call is new (then the tools run, all of them)."""
    earlier: dict[str, str] = {}
    turn = this_turn(messages)
    answers = {m.tool_call_id: m for m in turn if isinstance(m, ToolMessage)}
    for message in turn:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                answer = answers.get(call.get("id") or "")
                if answer is not None:
                    earlier.setdefault(_key(call), str(answer.content))
    calls = response.tool_calls
    if not calls or any(_key(call) not in earlier for call in calls):
        return None
    return [
        ToolMessage(
            earlier[_key(call)] + REPEATED_CALL_NOTE,
            tool_call_id=call.get("id") or "",
            name=call.get("name"),
        )
        for call in calls
    ]


def calls_written_as_text(response: AIMessage, tools: Sequence[Any]) -> AIMessage:
    """`response` with the tool calls it wrote as text (`{"name": <a chat tool>, "arguments":
    {...}}`, as small local models do, often in a code fence) made real calls; unchanged when
    it has real calls or its text is not unambiguously calls."""
    if response.tool_calls:
        return response
    text = response.text if isinstance(response.text, str) else ""
    calls = parse_text_tool_calls(text, tool_names(tools))
    if not calls:
        return response
    logger.info("the chat model wrote %d tool call(s) as text: run as calls", len(calls))
    return AIMessage(
        "",
        id=response.id,
        tool_calls=[
            {"name": c.name, "args": c.arguments, "id": f"text-call-{uuid.uuid4().hex[:12]}"}
            for c in calls
        ],
        usage_metadata=response.usage_metadata,
    )


_ECHOED_TAGS = re.compile(r"^\s*<tool_response>\s*(.*?)\s*(?:</tool_response>)?\s*$", re.S)


def without_echoed_tags(response: AIMessage) -> AIMessage:
    """`response` with the `<tool_response>` wrapper a small model copies from its chat template
    taken off its answer (the user would see the tags); unchanged otherwise."""
    text = response.text if isinstance(response.text, str) else ""
    match = _ECHOED_TAGS.match(text)
    if response.tool_calls or match is None or not match.group(1):
        return response
    return response.model_copy(update={"content": match.group(1)})


def folded_tool_rounds(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], str]:
    """`messages` without this turn's tool calls and results, and those results (each once) as
    a note for the system prompt: for a model asked again without tools, which some small models
    answer only when no tool exchange is in the way."""
    turn = this_turn(messages)
    kept = list(messages[: len(messages) - len(turn)])
    results: list[str] = []
    for message in turn:
        if isinstance(message, ToolMessage):
            text = str(message.content).removesuffix(REPEATED_CALL_NOTE)
            if text not in results:
                results.append(text)
        elif not (isinstance(message, AIMessage) and message.tool_calls):
            kept.append(message)
    note = TOOL_RESULTS_NOTE.format(results="\n\n".join(results)) if results else ""
    return kept, note


def asked_without_tools(
    prompt: ChatPrompt, messages: Sequence[BaseMessage], split: bool, note: str = ""
) -> list[BaseMessage]:
    """The request for an answer without tools: the system `prompt` (laid out as `split` says),
    this turn's tool results folded into it (folded_tool_rounds) and `note`, then the
    conversation without the calls."""
    kept, results = folded_tool_rounds(messages)
    return request_messages(prompt, kept, split, results + note)


def is_empty_answer(response: AIMessage) -> bool:
    """An answer with neither text nor a tool call (asked once more, with a note)."""
    text = response.text if isinstance(response.text, str) else ""
    return not response.tool_calls and not text.strip()


def without_tool_calls(response: AIMessage, tools: Sequence[Any]) -> AIMessage:
    """The final answer of a turn at its tool limit: text only (a model may still try a call,
    as a call or written as text)."""
    if calls_written_as_text(response, tools).tool_calls:
        return AIMessage(NO_ANSWER, id=response.id, usage_metadata=response.usage_metadata)
    return response


def invoke_once_more_on_error(model: Any, messages: list[Any], model_name: str) -> AIMessage:
    """`model.invoke(messages)`, again once when the provider fails (an HTTP 500, a dropped
    connection); then ChatModelError naming the provider's answer. The run fails with it; the
    user's message is already in the thread (checkpointed before this node)."""
    try:
        return model.invoke(messages)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        logger.warning("the chat model %s failed (%s: %s); trying once more", model_name,
                       type(exc).__name__, exc)  # fmt: skip
    try:
        return model.invoke(messages)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        raise ChatModelError(
            f"the chat model {model_name} failed twice; its provider answered: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
