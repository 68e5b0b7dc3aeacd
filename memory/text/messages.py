"""Chat messages as the memory system reads them: their text, and a session's last turn."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

TurnMessages = list[dict[str, str]]
ROLES = ("user", "assistant")
_ROLE_OF_TYPE = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
MAX_TURN_CHARS = 200_000  # a turn larger than this is a mistake, not a conversation
CONTEXT_MESSAGES = 4  # the writer's view of the exchange before a turn: at most these...
CONTEXT_CHARS = 1_200  # ... within this many characters (each message cut to half of it)
_QUESTION = re.compile(r"[^.!?。！？\n]*[?？]")


def text_of(content: Any) -> str:
    """The text of a message's content, a string or a list of content blocks (text blocks kept,
    images and tool calls left out). Everything that reads a message uses this one rule."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else block.get("text", "")
            for block in content
            if isinstance(block, str)
            or (isinstance(block, Mapping) and block.get("type", "text") == "text")
        ]
        return "\n".join(part for part in parts if isinstance(part, str) and part)
    return ""


def check_turn_messages(turn_messages: object) -> TurnMessages:
    """A copy of the turn as `[{role, content}]`; ValueError naming the bad message otherwise."""
    if not isinstance(turn_messages, Sequence) or isinstance(turn_messages, str | bytes):
        raise ValueError("turn_messages must be a list of {'role', 'content'} dicts")
    if not turn_messages:
        raise ValueError("turn_messages is empty: a turn needs at least the user's message")
    checked: TurnMessages = []
    for index, message in enumerate(turn_messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"turn_messages[{index}] must be a dict with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise ValueError(
                f"turn_messages[{index}]['role'] must be 'user' or 'assistant', not {role!r}"
            )
        if not isinstance(content, str):
            raise ValueError(f"turn_messages[{index}]['content'] must be a string")
        checked.append({"role": str(role), "content": content})
    total = sum(len(m["content"]) for m in checked)
    if total > MAX_TURN_CHARS:
        raise ValueError(f"the turn is {total} characters; the limit is {MAX_TURN_CHARS}")
    return checked


def _role_text_id(message: Any) -> tuple[str | None, str, str | None]:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
        return _ROLE_OF_TYPE.get(str(role)), text_of(message.get("content")), message.get("id")
    role = getattr(message, "type", None)
    return (
        _ROLE_OF_TYPE.get(str(role)),
        text_of(getattr(message, "content", "")),
        getattr(message, "id", None),
    )


def extract_last_turn(session_messages: Sequence[Any]) -> tuple[TurnMessages, str | None]:
    """The last user message and the assistant replies after it, plus that user message's id.

    Accepts LangChain messages or role/content dicts; tool messages, system messages and
    tool-call-only assistant messages are left out. `([], None)` when there is no user message.
    """
    converted = [_role_text_id(message) for message in session_messages]
    last_user = max((i for i, (role, _, _) in enumerate(converted) if role == "user"), default=None)
    if last_user is None:
        return [], None
    turn = [
        {"role": role, "content": text}
        for role, text, _ in converted[last_user:]
        if role is not None and text.strip()
    ]
    return turn, converted[last_user][2]


def preceding_exchange(
    session_messages: Sequence[Any],
    max_messages: int = CONTEXT_MESSAGES,
    max_chars: int = CONTEXT_CHARS,
) -> TurnMessages:
    """The user and assistant messages just before the last user message, oldest first, at
    most `max_messages` within `max_chars` (each cut to half of it, the oldest dropped first):
    what the memory writer reads as context to understand a short answer, never to extract."""
    converted = [_role_text_id(message) for message in session_messages]
    last_user = max((i for i, (role, _, _) in enumerate(converted) if role == "user"), default=0)
    earlier = [
        {"role": role, "content": text if len(text) <= max_chars // 2 else
         text[: max_chars // 2 - 1] + "…"}
        for role, text, _ in converted[:last_user]
        if role is not None and text.strip()
    ][-max_messages:]  # fmt: skip
    while earlier and sum(len(m["content"]) for m in earlier) > max_chars:
        earlier.pop(0)
    return earlier


def user_side(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """What the user said, each reply after the assistant's questions it answers ("Yes." to
    "Do you like jazz?" says the user likes jazz); the assistant's other words left out: a
    small model's chat reply ("I don't know Li Wei") is no fact about the user, and a small
    writer shown it stores nothing or the reply's inventions."""
    kept: list[dict[str, str]] = []
    for before, message in zip([None, *messages], messages, strict=False):
        if message["role"] != "user":
            continue
        asked = (
            _QUESTION.findall(before["content"]) if before and before["role"] == "assistant" else []
        )
        if asked:
            kept.append({"role": "assistant", "content": " ".join(q.strip() for q in asked)})
        kept.append(dict(message))
    return kept
