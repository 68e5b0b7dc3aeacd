"""Tool calls the memory agent got wrong (arguments that are not JSON, a call written as text):
spotted, and sent back to the model once with the error."""

from __future__ import annotations

import re
from typing import Any

from memory.writer.tools import TOOL_NAMES

REPAIR_ROUNDS = 1  # a tool call the model got wrong is sent back once with the error
_TOOL_CALL_AS_TEXT = re.compile(
    rf"\b(?:{'|'.join(TOOL_NAMES)})\s*\(\s*(?:[a-z_]+\s*=|[\"'{{\d])"
    rf"|\"(?:name|tool|function)\"\s*:\s*\"(?:{'|'.join(TOOL_NAMES)})\""
)


def unusable_call(message: Any) -> str | None:
    """Why the agent's last message is a tool call that cannot run (arguments that are not
    JSON, or a call written out as text), or None."""
    invalid = getattr(message, "invalid_tool_calls", None) or []
    if invalid:
        call = invalid[0]
        name = call.get("name") or "tool"
        return f"the arguments of your {name} call are not valid JSON ({call.get('error') or ''})"
    text = getattr(message, "text", "")
    if isinstance(text, str) and _TOOL_CALL_AS_TEXT.search(text):
        return "you wrote a tool call as text instead of calling the tool"
    return None
