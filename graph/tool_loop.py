"""The chat agent's model call and its tool loop, bounded: a few tool rounds per turn, a repeated
identical call answered from its first result, one answer without tools after the last round,
and a provider error retried once before the run fails with the provider's answer."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

logger = logging.getLogger(__name__)

REPEATED_CALL_NOTE = (
    "\n\n(The same call with the same arguments was already made in this turn; this is its "
    "earlier result. Do not call it again: use it and answer the user.)"
)
LAST_ROUND_NOTE = (
    "\n\n## Tool limit\nThe tools were used {rounds} times in this turn, the limit. Answer the "
    "user now with what you know, without calling any tool."
)
NO_ANSWER = "I could not finish that within the tool limit of this turn; please ask again."


class ChatModelError(RuntimeError):
    """The chat model failed twice; the message names the model and the provider's answer."""


def this_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the latest user message: this turn's tool rounds."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index + 1 :])
    return list(messages)


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


def without_tool_calls(response: AIMessage) -> AIMessage:
    """The final answer of a turn at its tool limit: text only (a model may still try a call)."""
    if not response.tool_calls:
        return response
    text = response.text if isinstance(response.text, str) else ""
    return AIMessage(text.strip() or NO_ANSWER, id=response.id)


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
