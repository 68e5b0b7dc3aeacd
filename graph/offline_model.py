"""OfflineChatModel: a labelled rule-based stand-in so every command runs without an LLM or key."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from memory.writer.turns import _text_of

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
# Facts that hold one value at a time: a new one replaces the old ("User lives in …").
_SINGLE_VALUED = frozenset(
    {
        "User's {0} is {1}",
        "User lives in {0}",
        "User works at {0}",
        "用户的{0}是{1}",
        "用户叫{0}",
        "用户住在{0}",
    }
)
_FORGET = re.compile(
    r"\bforget\b(?:\s+(?:about|that))?\s*(.*)|(?:忘掉|忘记|别记着)(.*)", re.I | re.S
)
# The read_memories listing: "[3] text" or "[3] (this conversation) text".
_LISTED_MEMORY = re.compile(r"^\[(\d+)\](?: \(this conversation\))? (.+)$", re.M)
_STOP_WORDS = frozenset(
    {"a", "an", "the", "my", "me", "i", "i'm", "im", "is", "are", "was", "about", "that"}
    | {"what", "where", "who", "please", "and", "of", "to", "in", "at", "do", "does", "user"}
    | {"user's", "you", "it", "this", "now"}
)
_MEMORIES_FENCE = re.compile(r"<memories>\s*(.*?)\s*</memories>", re.S)
# The memory writer's transcript: "user:" then the message in a ``` fence (memory/writer/turns.py).
_FENCED_USER_BLOCK = re.compile(r"^(?:user|用户)\s*[:：]\s*\n(`{3,})[a-z]*\n(.*?)\n\1", re.M | re.S)


def extract_memories(text: str) -> list[tuple[str, str, str]]:
    """What to remember from `text` as (description, theme, scope); questions are skipped.

    First-person facts are "user" scope; a sentence about this conversation's task ("let's …",
    "we are working on …", "这次…", "这个任务…", "我们在做…") gives "branch" scope memories.
    """
    return [(fact.description, fact.theme, fact.scope) for fact in extract_facts_with_keys(text)]


class Fact(NamedTuple):
    """One rule's finding; `key` is the start shared by every value of a one-valued fact
    ("User lives in "), empty for facts that can hold many values ("User likes …")."""

    description: str
    theme: str
    scope: str
    key: str


def extract_facts_with_keys(text: str) -> list[Fact]:
    """`extract_memories` with each fact's key; sentences asking to forget give no fact."""
    facts: list[Fact] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")) or _FORGET.search(sentence):
            continue
        scope = "branch" if _TASK_MARKER.search(sentence) else "user"
        for clause in _CLAUSE_SPLIT.split(sentence):
            chinese = re.search(r"[\u4e00-\u9fff]", clause)
            rules = _CHINESE_RULES if chinese else _ENGLISH_RULES
            fact = _first_match(clause, rules) or _first_match(clause, _TASK_RULES)
            if fact is not None:
                facts.append(Fact(fact[0], fact[1], scope, fact[2]))
    return list(dict.fromkeys(facts))


def forget_requests(text: str) -> list[str]:
    """What the user asked to forget ("forget where I live" → "where I live", "忘掉我住哪" →
    "我住哪"), one per sentence."""
    topics = []
    for sentence in _SENTENCE_SPLIT.split(text):
        match = _FORGET.search(sentence.strip())
        if match:
            topic = (match.group(1) or match.group(2) or "").strip(" .。!！")
            if topic:
                topics.append(topic)
    return topics


def _topic_terms(text: str) -> set[str]:
    """Word stems (first four letters, stop words left out) and Chinese character pairs."""
    words = {w[:4] for w in re.findall(r"[a-z']+", text.lower()) if w not in _STOP_WORDS}
    chinese = "".join(re.findall(r"[\u4e00-\u9fff]", text)).replace("用户", "").replace("我", "")
    return words | {chinese[i : i + 2] for i in range(len(chinese) - 1)}


def best_matches(topic: str, listed: dict[int, str]) -> list[int]:
    """The listed memories sharing the most terms with `topic` (none when nothing is shared)."""
    wanted = _topic_terms(topic)
    scores = {mid: len(wanted & _topic_terms(text)) for mid, text in listed.items()}
    top = max(scores.values(), default=0)
    return [mid for mid, score in scores.items() if score == top] if top else []


def extract_facts(text: str) -> list[tuple[str, str]]:
    """`extract_memories` without the scope: (description, theme)."""
    return [(description, theme) for description, theme, _ in extract_memories(text)]


def _first_match(
    clause: str, rules: list[tuple[re.Pattern[str], str, str]]
) -> tuple[str, str, str] | None:
    """One fact per clause: the first (most specific) rule that matches wins."""
    for pattern, template, theme in rules:
        match = pattern.search(clause)
        if match:
            parts = [part.strip(" '\"") for part in match.groups()]
            if not all(parts):
                return None
            key = ""
            if template in _SINGLE_VALUED:
                key = template.rsplit("{", 1)[0].format(*parts[:-1])
            return template.format(*parts), theme, key
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
    return _text_of(message.content)  # the memory writer's reading of a message


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
