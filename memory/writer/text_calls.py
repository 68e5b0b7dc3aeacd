"""Tool calls a model wrote as text instead of calling the tool: read back when unambiguous."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.writer.tools import TOOL_NAMES

_ID_ARGUMENTS = ("id", "id1", "id2")
_FENCE = re.compile(r"```(?:json)?|</?tool_call>|</?tool_response>|</?function_call>")


@dataclass(frozen=True)
class TextToolCall:
    """One call found in a model's text: a known tool and its arguments."""

    name: str
    arguments: dict[str, Any]


def _candidates(text: str) -> list[Any]:
    """Every JSON value that starts at a '{' or '[' of `text` and is not inside another one."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    at = 0
    while at < len(text):
        start = min((i for i in (text.find("{", at), text.find("[", at)) if i >= 0), default=-1)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            at = start + 1
            continue
        found.append(value)
        at = end
    return found


def _as_call(value: Any, names: Sequence[str]) -> TextToolCall | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name")
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            return None
    if name not in names or not isinstance(arguments, dict):
        return None
    fixed = dict(arguments)
    for key in _ID_ARGUMENTS:  # "4" for 4: a small model's usual slip, not an ambiguity
        if isinstance(fixed.get(key), str) and fixed[key].strip().isdigit():
            fixed[key] = int(fixed[key].strip())
    return TextToolCall(str(name), fixed)


def parse_text_tool_calls(
    text: str, names: Sequence[str] = TOOL_NAMES
) -> list[TextToolCall] | None:
    """The tool calls written as JSON in `text` (`{"name": <known tool>, "arguments": {...}}`,
    alone, in a list, a code fence or <tool_call> tags), or None when the text holds no such
    call or is ambiguous: a JSON value that is not a call of one of `names` (by default the
    memory tools), or a call written another way (`hit_memory(4)`), beside them."""
    if not isinstance(text, str) or not text.strip():
        return None
    values = _candidates(_FENCE.sub(" ", text))
    calls: list[TextToolCall] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        for item in items:
            call = _as_call(item, names)
            if call is None:
                return None
            calls.append(call)
    if not calls:
        return None
    # Text outside the JSON that itself looks like a call (name followed by a parenthesis).
    if re.search(rf"\b(?:{'|'.join(names)})\s*\(", _strip_json(_FENCE.sub(" ", text))):
        return None
    return calls


def _strip_json(text: str) -> str:
    """`text` without its JSON values (as written, not re-serialised)."""
    decoder = json.JSONDecoder()
    kept: list[str] = []
    at = 0
    while at < len(text):
        start = min((i for i in (text.find("{", at), text.find("[", at)) if i >= 0), default=-1)
        if start < 0:
            kept.append(text[at:])
            break
        try:
            _, end = decoder.raw_decode(text, start)
        except ValueError:
            kept.append(text[at : start + 1])
            at = start + 1
            continue
        kept.append(text[at:start])
        at = end
    return "".join(kept)
