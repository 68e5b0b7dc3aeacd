"""Turn messages: validation, a session's last turn, and the fenced text the memory agent reads."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

TurnMessages = list[dict[str, str]]
_ROLES = ("user", "assistant")
_LANGCHAIN_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
MAX_TURN_CHARS = 200_000  # a turn larger than this is a mistake, not a conversation


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
        if role not in _ROLES:
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


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: keep the text ones
        parts = [
            b if isinstance(b, str) else b.get("text", "")
            for b in content
            if isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") == "text")
        ]
        return "\n".join(p for p in parts if p)
    return ""


def _role_and_text(message: Any) -> tuple[str | None, str, str | None]:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
        return _LANGCHAIN_ROLES.get(str(role)), text_of(message.get("content")), message.get("id")
    role = getattr(message, "type", None)
    return (
        _LANGCHAIN_ROLES.get(str(role)),
        text_of(getattr(message, "content", "")),
        getattr(message, "id", None),
    )


def extract_last_turn(session_messages: Sequence[Any]) -> tuple[TurnMessages, str | None]:
    """The last user message and the assistant replies after it, plus that user message's id.

    Accepts LangChain messages or role/content dicts; tool messages, system messages and
    tool-call-only assistant messages are left out. `([], None)` when there is no user message.
    """
    converted = [_role_and_text(message) for message in session_messages]
    last_user = max((i for i, (role, _, _) in enumerate(converted) if role == "user"), default=None)
    if last_user is None:
        return [], None
    turn = [
        {"role": role, "content": text}
        for role, text, _ in converted[last_user:]
        if role is not None and text.strip()
    ]
    return turn, converted[last_user][2]


def fence(text: str) -> str:
    """Wrap text in a backtick fence longer than any backtick run inside it, so it cannot escape."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{text}\n{marks}"


def format_turn(turn_messages: TurnMessages, labels: Mapping[str, str]) -> str:
    """Each message as a fenced block under its role label."""
    return "\n\n".join(
        f"{labels.get(m['role'], m['role'])}:\n{fence(m['content'])}" for m in turn_messages
    )


def contains_cjk(text: str) -> bool:
    """Whether the text has Chinese characters (used for `language="auto"`)."""
    return re.search(r"[\u4e00-\u9fff]", text) is not None
