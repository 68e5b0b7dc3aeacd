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

logger = logging.getLogger(__name__)

LABEL = "[offline model]"
# The memory writer's default sections (prompts/writer.py), so offline memories land where a real
# model would put them.
PROFILE_THEME = "identity"
PREFERENCE_THEME = "taste"
PROFILE_THEME_ZH = "身份"
PREFERENCE_THEME_ZH = "品味"
TASK_THEME = "moments"
TASK_THEME_ZH = "瞬间"

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；;\n])\s*")
_CLAUSE_SPLIT = re.compile(r"[,;，；]\s*|\s+(?:and|but)\s+(?=(?:I|my)\b)", re.I)
_CLAUSE_END = r"[^.!?,;。！？，；、\n]"
# (pattern, template, theme); \b and ASCII classes keep English rules off Chinese text.
_ENGLISH_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (
        re.compile(rf"\bmy ([a-z][a-z' ]{{0,40}}?) (?:is|are) ({_CLAUSE_END}+)", re.I),
        "User's {0} is {1}",
        PROFILE_THEME,
    ),
    (re.compile(rf"\bI live in ({_CLAUSE_END}+)", re.I), "User lives in {0}", PROFILE_THEME),
    (
        re.compile(rf"\bI work (?:at|for) ({_CLAUSE_END}+)", re.I),
        "User works at {0}",
        PROFILE_THEME,
    ),
    (
        re.compile(rf"\bI (?:like|love|enjoy) ({_CLAUSE_END}+)", re.I),
        "User likes {0}",
        PREFERENCE_THEME,
    ),
    (re.compile(rf"\bI(?: am|'m) ({_CLAUSE_END}+)", re.I), "User is {0}", PROFILE_THEME),
]
_CHINESE_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (
        re.compile(rf"我的({_CLAUSE_END}{{1,12}}?)是({_CLAUSE_END}+)"),
        "用户的{0}是{1}",
        PROFILE_THEME_ZH,
    ),
    (re.compile(rf"我叫({_CLAUSE_END}+)"), "用户叫{0}", PROFILE_THEME_ZH),
    (re.compile(rf"我住在({_CLAUSE_END}+)"), "用户住在{0}", PROFILE_THEME_ZH),
    (re.compile(rf"我喜欢({_CLAUSE_END}+)"), "用户喜欢{0}", PREFERENCE_THEME_ZH),
    (re.compile(rf"我是({_CLAUSE_END}+)"), "用户是{0}", PROFILE_THEME_ZH),
]
# The scope rule of the memory writer's prompt, by keyword: a sentence about this conversation's
# task is remembered for this branch only; everything else the user says about themselves is
# remembered for every conversation.
_TASK_MARKER = re.compile(
    r"\blet(?:'s| us)\b|\bwe(?: are|'re) working on\b|\bthis task\b|\bfor this conversation\b"
    r"|这次|这个任务|我们在做",
    re.I,
)
_TASK_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(rf"\blet(?:'s| us) ({_CLAUSE_END}+)", re.I), "Current task: {0}", TASK_THEME),
    (
        re.compile(rf"\bwe(?: are|'re) working on ({_CLAUSE_END}+)", re.I),
        "Current task: {0}",
        TASK_THEME,
    ),
    (re.compile(rf"\bthis task is ({_CLAUSE_END}+)", re.I), "Current task: {0}", TASK_THEME),
    (
        re.compile(rf"\bfor this conversation,?\s*({_CLAUSE_END}+)", re.I),
        "For this conversation: {0}",
        TASK_THEME,
    ),
    (re.compile(rf"这个任务是?({_CLAUSE_END}+)"), "当前任务：{0}", TASK_THEME_ZH),
    (re.compile(rf"我们在做({_CLAUSE_END}+)"), "当前任务：做{0}", TASK_THEME_ZH),
    (re.compile(rf"这次({_CLAUSE_END}+)"), "本次对话：{0}", TASK_THEME_ZH),
]
_MEMORIES_FENCE = re.compile(r"<memories>\s*(.*?)\s*</memories>", re.S)
# The memory writer's transcript: "user:" then the message in a ``` fence (memory/writer/turns.py).
_FENCED_USER_BLOCK = re.compile(r"^(?:user|用户)\s*[:：]\s*\n(`{3,})[a-z]*\n(.*?)\n\1", re.M | re.S)


def extract_memories(text: str) -> list[tuple[str, str, str]]:
    """What to remember from `text` as (description, theme, scope); questions are skipped.

    First-person facts are "user" scope; a sentence about this conversation's task ("let's …",
    "we are working on …", "这次…", "这个任务…", "我们在做…") gives "branch" scope memories.
    """
    memories: list[tuple[str, str, str]] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        scope = "branch" if _TASK_MARKER.search(sentence) else "user"
        for clause in _CLAUSE_SPLIT.split(sentence):
            chinese = re.search(r"[\u4e00-\u9fff]", clause)
            rules = _CHINESE_RULES if chinese else _ENGLISH_RULES
            fact = _first_match(clause, rules) or _first_match(clause, _TASK_RULES)
            if fact is not None:
                memories.append((*fact, scope))
    return list(dict.fromkeys(memories))


def extract_facts(text: str) -> list[tuple[str, str]]:
    """`extract_memories` without the scope: (description, theme)."""
    return [(description, theme) for description, theme, _ in extract_memories(text)]


def _first_match(
    clause: str, rules: list[tuple[re.Pattern[str], str, str]]
) -> tuple[str, str] | None:
    """One fact per clause: the first (most specific) rule that matches wins."""
    for pattern, template, theme in rules:
        match = pattern.search(clause)
        if match:
            parts = [part.strip(" '\"") for part in match.groups()]
            return (template.format(*parts), theme) if all(parts) else None
    return None


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
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


class OfflineChatModel(BaseChatModel):
    """Rule-based and labelled: as the memory writer it turns first-person facts into
    `create_memory` calls; as the chat model it quotes the memories it was given. Nothing more."""

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
        if "create_memory" in called:
            return AIMessage(content=f"{LABEL} Done.")
        known = " ".join(_text(m) for m in tool_results).lower()
        facts = [f for f in extract_memories(user_text(messages)) if f[0].lower() not in known]
        if not facts:
            return AIMessage(content=f"{LABEL} Nothing new to remember.")
        logger.info("%s writing %d memories by rule", LABEL, len(facts))
        # An older create_memory without a scope parameter gets none.
        takes_scope = "scope" in tool_parameters.get("create_memory", {})
        calls = []
        for text, theme, scope in facts:
            args = {"content": text, "section": theme}
            calls.append(("create_memory", {**args, "scope": scope} if takes_scope else args))
        return _tool_calls_message(calls)

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        system = " ".join(_text(m) for m in messages if isinstance(m, SystemMessage))
        fence = _MEMORIES_FENCE.search(system)
        memories = [
            ln.strip() for ln in (fence.group(1) if fence else "").splitlines() if ln.strip()
        ]
        chinese = bool(re.search(r"[\u4e00-\u9fff]", system))
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
        return AIMessage(content=f"{LABEL} {head}\n{body}".strip())


def _tool_calls_message(calls: list[tuple[str, dict[str, Any]]]) -> AIMessage:
    tool_calls = [
        {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}
        for name, args in calls
    ]
    summary = json.dumps([c["name"] for c in tool_calls])
    return AIMessage(content=f"{LABEL} calling {summary}", tool_calls=tool_calls)
