"""The stub model's memory writer for the replica lane: `HIT <words>` turns mark a memory used."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from tests.e2e.stub_openai import _USER_BLOCK, _text, scripted_reply

HIT_PREFIX = "HIT "


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:10]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def replica_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A writer whose turn says `HIT <words>` reads the memories, then calls hit_memory on the
    one that holds those words, as a real model does when a turn relied on a memory; every other
    request is answered as the e2e stub answers it (one create_memory per user message)."""
    messages = request.get("messages", [])
    tools = {t["function"]["name"] for t in request.get("tools") or []}
    if "hit_memory" not in tools:
        return scripted_reply(request)
    prompt = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    said = [match.group(2).strip() for match in _USER_BLOCK.finditer(prompt)]
    needles = [text[len(HIT_PREFIX) :] for text in said if text.startswith(HIT_PREFIX)]
    if not needles:
        return scripted_reply(request)
    results = [_text(m.get("content")) for m in messages if m.get("role") == "tool"]
    if not results:
        return _call("read_memories", {})
    if len(results) == 1:
        found = re.search(rf"^\[(\d+)\]\S*\s.*{re.escape(needles[0])}", results[0], re.M)
        if found:
            return _call("hit_memory", {"id": int(found.group(1))})
    return {"role": "assistant", "content": "Memory updated."}
