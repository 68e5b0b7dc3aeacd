"""OfflineChatModel: a labelled rule-based stand-in so every command runs without an LLM or key."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from memory.integration.models.offline_rules import (
    best_matches,
    extract_facts_with_keys,
    forget_requests,
)
from memory.text.language import has_cjk
from memory.text.messages import text_of

logger = logging.getLogger(__name__)

LABEL = "[offline model]"
# The read_memories listing: "[3] text" or "[3] (this conversation) text".
_LISTED_MEMORY = re.compile(r"^\[(\d+)\](?: \(this conversation\))? (.+)$", re.M)
_MEMORIES_FENCE = re.compile(r"<memories>\s*(.*?)\s*</memories>", re.S)
_SAID_RECENTLY_FENCE = re.compile(r"<said_recently>\s*(.*?)\s*</said_recently>", re.S)
_OFF_THE_RECORD = "<off_the_record>"  # the app's note for a conversation kept out of memory
_COMING_UP_FENCE = re.compile(r"<coming_up>\s*(.*?)\s*</coming_up>", re.S)
# The memory writer's transcript: "user:", then the message in a ``` fence (format_messages).
_FENCED_USER_BLOCK = re.compile(r"^(?:user|用户)\s*[:：]\s*\n(`{3,})[a-z]*\n(.*?)\n\1", re.M | re.S)


def user_text(messages: Sequence[BaseMessage]) -> str:
    """What the user said: the user's blocks when the prompt is the writer's transcript, else
    the human messages themselves (never the assistant's words)."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            content = _text(message)
            blocks = [match.group(2) for match in _FENCED_USER_BLOCK.finditer(content)]
            parts.extend(blocks if blocks else [content])
    return "\n".join(parts)


def _text(message: BaseMessage) -> str:
    return text_of(message.content)  # the memory writer's reading of a message


class OfflineChatModel(BaseChatModel):
    """Rule-based and labelled: as the memory writer it turns first-person facts into
    `create_memory` calls, a changed one-valued fact ("I live in …") into `update_memory`, and
    "forget …" / "忘掉…" into `delete_memory`; as the chat model it quotes the memories it was
    given. Nothing more."""

    @property
    def _llm_type(self) -> str:
        return "gulfstream-offline"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools") or []
        tool_parameters = {
            tool["function"]["name"]: tool["function"].get("parameters", {}).get("properties", {})
            for tool in tools
        }
        if "create_memory" in tool_parameters:
            reply = self._write_memories(messages, tool_parameters)
        else:
            reply = self._answer(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _write_memories(
        self, messages: list[BaseMessage], tool_parameters: dict[str, dict[str, Any]]
    ) -> AIMessage:
        tool_names = set(tool_parameters)
        tool_results = [m for m in messages if isinstance(m, ToolMessage)]
        called = {m.name for m in tool_results}
        if "read_memories" in tool_names and "read_memories" not in called:
            return _tool_calls_message([("read_memories", {})])
        if called & {"create_memory", "update_memory", "delete_memory"}:
            return AIMessage(content=f"{LABEL} Done.")
        listing = "\n".join(_text(m) for m in tool_results if m.name == "read_memories")
        listed = {int(mid): text for mid, text in _LISTED_MEMORY.findall(listing)}
        said = user_text(messages)
        calls = self._forget_calls(said, listed, tool_names)
        forgotten = {call[1]["id"] for call in calls}
        known = " ".join(_text(m) for m in tool_results).lower()
        # An older create_memory without a scope parameter gets none.
        takes_scope = "scope" in tool_parameters.get("create_memory", {})
        for fact in extract_facts_with_keys(said):
            if fact.description.lower() in known:
                continue
            same_key = [
                mid
                for mid, text in listed.items()
                if fact.key and text.startswith(fact.key) and mid not in forgotten
            ]
            if same_key and "update_memory" in tool_names:
                reason = "the user said it changed"
                args = {"id": same_key[0], "content": fact.description, "reason": reason}
                calls.append(("update_memory", args))
                forgotten.add(same_key[0])  # one update per memory in a turn
                continue
            args = {"content": fact.description, "section": fact.theme}
            calls.append(("create_memory", {**args, "scope": fact.scope} if takes_scope else args))
        if not calls:
            return AIMessage(content=f"{LABEL} Nothing new to remember.")
        logger.info("%s changing %d memories by rule", LABEL, len(calls))
        return _tool_calls_message(calls)

    @staticmethod
    def _forget_calls(
        said: str, listed: dict[int, str], tool_names: set[str]
    ) -> list[tuple[str, dict[str, Any]]]:
        if "delete_memory" not in tool_names:
            return []
        ids: list[int] = []
        for topic in forget_requests(said):
            ids += [mid for mid in best_matches(topic, listed) if mid not in ids]
        return [
            ("delete_memory", {"id": mid, "reason": "the user asked to forget it"}) for mid in ids
        ]

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        system = " ".join(_text(m) for m in messages if isinstance(m, SystemMessage))
        fence = _MEMORIES_FENCE.search(system)
        memories = [
            ln.strip() for ln in (fence.group(1) if fence else "").splitlines() if ln.strip()
        ]
        said = _SAID_RECENTLY_FENCE.search(system)
        said_lines = (said.group(1) if said else "").splitlines()
        memories += [ln.strip() for ln in said_lines if ln.strip()]
        coming = _COMING_UP_FENCE.search(system)  # plans of the next days lead
        memories[:0] = [ln.strip() for ln in (coming.group(1) if coming else "").splitlines()]
        memories = [line for line in memories if line]
        # The question's language, not the prompt's: a Chinese memory in the prompt does not
        # make the answer to an English question Chinese.
        asked = [_text(m) for m in messages if isinstance(m, HumanMessage)]
        chinese = has_cjk(asked[-1] if asked else system)
        if memories:
            head = (
                "（离线模型，仅引用记忆）相关记忆："
                if chinese
                else ("(no LLM configured, quoting what memory returned) Related memories:")
            )
            body = "\n".join(memories)
        else:
            head = (
                "（离线模型）没有相关记忆。"
                if chinese
                else ("(no LLM configured) No related memories for this message.")
            )
            body = ""
        if _OFF_THE_RECORD in system:
            head = (
                "（这段对话不留记录：我不会记住它。）" if chinese
                else "(Off the record: I will not remember this conversation.)"
            ) + " " + head  # fmt: skip
        return AIMessage(content=f"{LABEL} {head}\n{body}".strip())


def _tool_calls_message(calls: list[tuple[str, dict[str, Any]]]) -> AIMessage:
    tool_calls = [
        {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}
        for name, args in calls
    ]
    summary = json.dumps([c["name"] for c in tool_calls])
    return AIMessage(content=f"{LABEL} calling {summary}", tool_calls=tool_calls)
