"""The memory writer's json protocol: one request whose answer is a JSON list of operations
(create / update / delete / merge / hit on the short ids shown), sent with a JSON schema as
`response_format` so that servers which constrain decoding (llama.cpp, Ollama, vLLM, OpenAI)
return valid JSON; applied through the same staged tools and guards as the tool protocol."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.prompts import writer_json as text
from memory.writer.faithful import evidence_words, expected_languages, language_problem
from memory.writer.tools import FULL, MemoryToolkit

MAX_OPERATIONS = 8  # a turn rarely holds more facts; bounds what a looping model can emit
MAX_ANSWER_TOKENS = 600
OPS = ("create", "update", "delete", "merge", "hit")


class UnusableAnswer(ValueError):
    """The model's answer is not the JSON asked for; the message says why (sent back once)."""


@dataclass
class JsonOutcome:
    """What one answer did: results of the operations that ran, and the model's mistakes."""

    results: list[str] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)  # unknown ids, missing fields, bad ops
    refused: list[str] = field(default_factory=list)  # guards: deletes nobody asked for, ...
    # The languages a created fact was refused for not being in ("zh" for an English
    # translation of a Chinese message): what memory/writer/coverage.py falls back on.
    wrong_language: set[str] = field(default_factory=set)

    @property
    def applied(self) -> int:
        return len(self.results)


def operations_schema(ids: Sequence[int], sections: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of an answer: ids limited to the ones shown, sections to those known (a
    server that constrains decoding then cannot produce an unknown id)."""
    content = {"type": "string", "minLength": 1, "maxLength": 400}
    section: dict[str, Any] = {"type": "string", "enum": list(sections)} if sections else content
    memory_id: dict[str, Any] = {"type": "integer", "enum": list(ids)}

    def op(name: str, **properties: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"op": {"type": "string", "enum": [name]}, **properties},
            "required": ["op", *properties],
            "additionalProperties": False,
        }

    variants = [op("create", content=content, section=section)]
    if ids:
        variants += [
            op("update", id=memory_id, content=content),
            op("delete", id=memory_id),
            op("merge", id=memory_id, other_id=memory_id, content=content),
            op("hit", id=memory_id),
        ]
    return {
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "items": {"anyOf": variants},
                "maxItems": MAX_OPERATIONS,
            }
        },
        "required": ["operations"],
        "additionalProperties": False,
    }


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI-style `response_format` carrying `schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "memory_operations", "schema": schema, "strict": True},
    }


_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def parse_operations(answer: str) -> list[dict[str, Any]]:
    """The operations in the model's answer: `{"operations": [...]}`, a bare list, or either
    inside a code fence or after some words. UnusableAnswer when there is no such JSON."""
    if not isinstance(answer, str) or not answer.strip():
        raise UnusableAnswer("the answer was empty")
    cleaned = _FENCE.sub("", answer.strip())
    value: Any = None
    try:
        value = json.loads(cleaned)
    except ValueError:
        start = min((i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0), default=-1)
        if start >= 0:
            try:
                value, _ = json.JSONDecoder().raw_decode(cleaned, start)
            except ValueError:
                value = None
    if value is None:
        raise UnusableAnswer(f"it is not valid JSON: {answer.strip()[:120]!r}")
    if isinstance(value, dict) and "operations" in value:
        value = value["operations"]
    elif isinstance(value, dict) and "op" in value:
        value = [value]
    if not isinstance(value, list):
        raise UnusableAnswer('it has no "operations" list')
    return value[: 2 * MAX_OPERATIONS]


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _run(kit: MemoryToolkit, tool: str, **arguments: Any) -> str:
    """A tool called as the model would: the tool checks every argument (types included)."""
    return str(getattr(kit, tool)(**arguments))


def _failed(result: str) -> bool:
    return result.startswith("Error:")


def _grounded(content: Any, said: str) -> bool:
    """Whether `content` holds a word of what was said (a CJK pair counts as one word): a small
    model otherwise stores its prompt's example or an invented detail on a "hi"."""
    if not isinstance(content, str):
        return True  # the tool's own check answers a missing text
    return bool(evidence_words(content) & evidence_words(said))


# Facts that hold one value at a time, by the words that say them: a small model often creates
# "The user lives in Shanghai" beside "The user lives in Hangzhou" instead of updating it.
_ONE_VALUED = {
    "home": re.compile(r"\b(lives? in|living in|moved to|home is)\b|住在|搬到|搬去|家在"),
    "name": re.compile(r"\b(name is|is called|goes by)\b|名叫|叫做|名字是"),
    "job": re.compile(r"\b(works? as|job is|is employed as)\b|职业是|工作是"),
}


def _kinds(text: str) -> set[str]:
    return {kind for kind, pattern in _ONE_VALUED.items() if pattern.search(text.lower())}


def _newest_holding(kit: MemoryToolkit, kinds: set[str], besides: int | None = None) -> int | None:
    """The short id of the newest live memory (other than `besides`) that says one of these
    kinds of one-valued fact, or None."""
    same = [
        m for m in kit.view.live.values()
        if m.short_id != besides and _kinds(m.description) & kinds
    ]  # fmt: skip
    return same[-1].short_id if same else None


def _replaced(kit: MemoryToolkit, content: Any) -> int | None:
    """The memory a new one-valued fact replaces (the newest saying the same kind), or None."""
    return _newest_holding(kit, _kinds(content)) if isinstance(content, str) else None


def _retargeted(kit: MemoryToolkit, target: int | None, content: Any) -> int | None:
    """The memory an update is really about: a small model often folds a changed one-valued fact
    into the wrong memory ("The user's name is Li Wei and he moved to Shanghai" onto the name,
    leaving "The user lives in Hangzhou"). When the new text brings a kind of one-valued fact the
    target does not hold and another memory does, that memory is the one that changed."""
    current = kit.view.live.get(target) if target is not None else None
    if current is None or not isinstance(content, str):
        return target
    brought = _kinds(content) - _kinds(current.description)
    moved_to = _newest_holding(kit, brought, besides=target)
    return target if moved_to is None else moved_to


def apply_operations(
    kit: MemoryToolkit, operations: list[Any], said: str | None = None
) -> JsonOutcome:
    """Run each operation through the toolkit's tools, so that every guard of the tool protocol
    holds (ids from the list only, secrets, removal limits, copy-on-write). A delete the user
    did not ask for is refused here: a small model cannot be trusted to judge what is obsolete,
    and an update keeps a changed fact anyway. A create or update whose text holds no word the
    user said (`said`, by default the user's words and the questions they answered) is refused
    as not grounded."""
    outcome = JsonOutcome()
    said = (kit.heard_from_user or kit.turn_text) if said is None else said
    for number, operation in enumerate(operations, 1):
        where = f"operation {number}"
        if not isinstance(operation, Mapping) or operation.get("op") not in OPS:
            outcome.mistakes.append(f"{where} is not one of {', '.join(OPS)}")
            continue
        op = str(operation["op"])
        ids = {key: _int(operation.get(key)) for key in ("id", "other_id")}
        if op != "create" and ids["id"] is None:
            outcome.mistakes.append(f"{where} ({op}) needs a number as id")
            continue
        content = operation.get("content")
        wrong = (
            language_problem(content, kit.user_messages, kit.language_policy)
            if (op in ("create", "update", "merge") and isinstance(content, str))
            else None
        )
        if wrong is not None:  # before the grounding test, which a translation fails: asked again
            outcome.mistakes.append(f"{where} ({op}): {wrong}")
            if op == "create":
                outcome.wrong_language |= expected_languages(
                    str(content), kit.user_messages, kit.language_policy
                )
            continue
        if op in ("create", "update", "merge") and not _grounded(content, said):
            message = f"{where} ({op}) refused: {content!r} holds nothing the user said"
            outcome.refused.append(kit.record_refused_call(f"{op} (json)", message))
            continue
        replaced = _replaced(kit, content) if op == "create" else None
        if replaced is not None:  # a changed one-valued fact: the old value goes
            op, ids["id"] = "update", replaced
        elif op == "update":
            ids["id"] = _retargeted(kit, ids["id"], content)
        if op == "create":
            section = operation.get("section")
            if not isinstance(section, str) or not section.strip():
                section = kit_default_section(kit)
            result = _run(kit, "create_memory", content=content, section=section, scope="user")
        elif op == "update":
            result = _run(
                kit, "update_memory", id=ids["id"], content=content, reason=text.UPDATE_REASON
            )
        elif op == "delete":
            if not kit.forget_requested:
                message = (
                    f"{where}: delete of memory {ids['id']} refused: the user asked to forget "
                    "nothing"
                )
                outcome.refused.append(kit.record_refused_call("delete_memory", message))
                continue
            result = _run(kit, "delete_memory", id=ids["id"], reason=text.DELETE_REASON)
        elif op == "merge":
            if ids["other_id"] is None:
                outcome.mistakes.append(f"{where} (merge) needs a number as other_id")
                continue
            kept = kit.view.live.get(ids["id"])  # type: ignore[arg-type]
            section = kept.theme if kept is not None else kit_default_section(kit)
            result = _run(kit, "merge_memories", 
                id1=ids["id"], id2=ids["other_id"], content=content, section=section,
                reason=text.MERGE_REASON,
            )  # fmt: skip
        else:
            result = _run(kit, "hit_memory", id=ids["id"])
        if _failed(result):
            # Unknown ids and bad text are the model's mistakes; the limits are the guards'.
            guarded = any(word in result for word in ("limit", "secret", FULL))
            bucket = outcome.refused if guarded else outcome.mistakes
            bucket.append(f"{where} ({op}): {result.removeprefix('Error: ')}")
        else:
            outcome.results.append(result)
    return outcome


def kit_default_section(kit: MemoryToolkit) -> str:
    """Where a fact goes when the model named no section: the first one in use, else "notes"."""
    for memory in kit.view.live.values():
        return memory.theme
    return "notes"


def section_names(sections: Any, kit: MemoryToolkit) -> list[str]:
    """The sections an answer may use: the configured ones and those already in the store."""
    listed = list(sections.keys()) if isinstance(sections, Mapping) else list(sections)
    names = [str(getattr(section, "name", section)) for section in listed]  # MemorySection too
    for memory in kit.view.live.values():
        if memory.theme not in names:
            names.append(memory.theme)
    return names
