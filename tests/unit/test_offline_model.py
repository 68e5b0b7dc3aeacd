"""The offline model: rule-based facts into create_memory calls, replies that quote memories."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool

from memory.integration.app_text import AppText, current_app_text
from memory.integration.models.loading import load_chat_model
from memory.integration.models.offline import LABEL, OfflineChatModel
from memory.integration.models.offline_rules import best_matches, extract_facts, extract_memories
from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.consumer import MemoryConsumer
from memory.writer.turn import Turn
from prompts import persona

# The sections a fact of each kind goes to: prompts/persona.py's, whatever they are called.
PROFILE, PREFERENCE, TASK = (
    current_app_text().section_name(k, "en") for k in ("profile", "preference", "task")
)
PROFILE_ZH, PREFERENCE_ZH = (
    current_app_text().section_name("profile", "zh"),
    current_app_text().section_name("preference", "zh"),
)


def create_memory(content: str, section: str) -> str:
    """Create a memory."""
    return "ok"


def read_memories() -> str:
    """List memories."""
    return ""


def test_english_facts_and_questions() -> None:
    facts = extract_facts("Hi! My name is Ada and I live in Lisbon. I like green tea. Where am I?")
    assert facts == [
        ("User's name is Ada", PROFILE),
        ("User lives in Lisbon", PROFILE),
        ("User likes green tea", PREFERENCE),
    ]
    assert extract_facts("What is my name? Do you know where I live?") == []


def test_chinese_facts() -> None:
    facts = extract_facts("我叫小明。我住在上海，我喜欢喝茶。我的猫的名字是咪咪。")
    assert [text for text, _ in facts] == [
        "用户叫小明",
        "用户住在上海",
        "用户喜欢喝茶",
        "用户的猫的名字是咪咪",
    ]
    assert {theme for _, theme in facts} == {PROFILE_ZH, PREFERENCE_ZH}


def test_scope_rule_task_sentences_are_branch_facts_about_the_user_are_user() -> None:
    said = "I live in Lisbon. Let's plan a trip to Kyoto. For this conversation, my budget is 900."
    assert extract_memories(said) == [
        ("User lives in Lisbon", PROFILE, "user"),
        ("Current task: plan a trip to Kyoto", TASK, "branch"),
        ("User's budget is 900", PROFILE, "branch"),  # a fact, but only for this task
    ]
    chinese = extract_memories("我住在上海。我们在做一个网站。这个任务是写一份报告。")
    assert [(text, scope) for text, _, scope in chinese] == [
        ("用户住在上海", "user"),
        ("当前任务：做一个网站", "branch"),
        ("当前任务：写一份报告", "branch"),
    ]
    assert extract_memories("Let me think. Shall we work on it?") == []


def create_memory_with_scope(content: str, section: str, scope: str = "user") -> str:
    """Create a memory."""
    return "ok"


SCOPED_CREATE = StructuredTool.from_function(create_memory_with_scope, name="create_memory")


def test_writer_passes_the_scope_when_the_tool_takes_one() -> None:
    prompt = [HumanMessage("user:\n```text\nI like tea. We are working on a poem.\n```")]
    scoped = OfflineChatModel().bind_tools([SCOPED_CREATE]).invoke(prompt)
    assert [c["args"] for c in scoped.tool_calls] == [
        {"content": "User likes tea", "section": PREFERENCE, "scope": "user"},
        {"content": "Current task: a poem", "section": TASK, "scope": "branch"},
    ]
    plain = OfflineChatModel().bind_tools([create_memory]).invoke(prompt)
    assert all("scope" not in c["args"] for c in plain.tool_calls)


def test_writer_reads_first_then_creates_only_new_facts_then_stops() -> None:
    model = OfflineChatModel().bind_tools([create_memory, read_memories])
    prompt = [HumanMessage("user:\n```text\nMy name is Ada. I live in Lisbon.\n```")]
    first = model.invoke(prompt)
    assert isinstance(first, AIMessage) and [c["name"] for c in first.tool_calls] == [
        "read_memories"
    ]
    listing = ToolMessage(
        "1. [identity] User's name is Ada", tool_call_id="x", name="read_memories"
    )
    second = model.invoke([*prompt, first, listing])
    assert [c["args"] for c in second.tool_calls] == [
        {"content": "User lives in Lisbon", "section": PROFILE}
    ]
    created = ToolMessage("Created memory 2", tool_call_id="y", name="create_memory")
    third = model.invoke([*prompt, first, listing, second, created])
    assert not third.tool_calls and LABEL in third.content


def test_writer_ignores_the_assistant_part_of_the_transcript() -> None:
    model = OfflineChatModel().bind_tools([create_memory])
    prompt = (
        "user:\n```text\nhello\n```\n\nassistant:\n```text\nI am an assistant. I like cats.\n```"
    )
    reply = model.invoke([HumanMessage(prompt)])
    assert not reply.tool_calls


def test_chat_reply_quotes_the_fenced_memories_and_is_labelled() -> None:
    system = SystemMessage("Memories:\n<memories>\n- [identity] User lives in Lisbon\n</memories>")
    reply = OfflineChatModel().invoke([system, HumanMessage("Where do I live?")])
    assert reply.content.startswith(LABEL)
    assert "User lives in Lisbon" in reply.content
    empty = OfflineChatModel().invoke([SystemMessage("No memories."), HumanMessage("hi")])
    assert LABEL in empty.content and "No related memories" in empty.content


async def test_memory_consumer_with_the_offline_model_writes_once(tmp_path: object) -> None:
    manager = YamlMemoryManager(str(tmp_path), "ada")
    memory = LongTermMemory(manager)
    consumer = MemoryConsumer(OfflineChatModel())
    said = ({"role": "user", "content": "My name is Ada and I live in Lisbon."},)
    result = await consumer.consume(Turn("ada", "s1:m1", said, thread_id="s1"), memory)
    assert result.applied
    assert sorted(i.description for i in manager.list_items().values()) == [
        "User lives in Lisbon",
        "User's name is Ada",
    ]
    # a retried delivery
    again = await consumer.consume(Turn("ada", "s1:m1", said, thread_id="s1"), memory)
    assert not again.applied and len(manager.list_items()) == 2
    # the same facts told again
    repeated = await consumer.consume(Turn("ada", "s2:m1", said, thread_id="s2"), memory)
    assert len(manager.list_items()) == 2, repeated


def test_no_credentials_gives_the_offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert isinstance(load_chat_model("openai/gpt-4o-mini"), OfflineChatModel)
    assert isinstance(load_chat_model("offline/rules"), OfflineChatModel)


def test_base_url_alone_reaches_an_openai_compatible_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_openai import ChatOpenAI

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = load_chat_model("openai/qwen2.5-7b-instruct")
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen2.5-7b-instruct"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_graph_needs_no_key() -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"
    }
    code = (
        "import graph.agent, memory.integration.writing.writer_graph; print(graph.agent.graph.name)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Gulfstream"


@pytest.mark.parametrize(
    ("told", "moved", "forget", "before", "after"),
    [
        (
            "I live in Lisbon. I like tea.",
            "Actually I live in Porto now.",
            "Please forget where I live.",
            "User lives in Lisbon",
            "User lives in Porto now",
        ),
        (
            "我住在北京。我喜欢绿茶。",
            "我住在上海。",
            "忘掉我住在哪里。",
            "用户住在北京",
            "用户住在上海",
        ),
    ],
)
async def test_the_offline_writer_updates_a_changed_fact_and_forgets_on_request(
    tmp_path: object, told: str, moved: str, forget: str, before: str, after: str
) -> None:
    manager = YamlMemoryManager(str(tmp_path), "ada")
    memory = LongTermMemory(manager)
    consumer = MemoryConsumer(OfflineChatModel(), language="auto")

    def live() -> dict[str, str]:
        return {mid: item.description for mid, item in manager.list_items().items()}

    def said(turn_id: str, text: str) -> Turn:
        return Turn("ada", turn_id, ({"role": "user", "content": text},), thread_id="s")

    await consumer.consume(said("s:1", told), memory)
    [home_id] = [mid for mid, text in live().items() if text == before]
    await consumer.consume(said("s:2", moved), memory)
    assert live()[home_id] == after and len(live()) == 2  # updated in place, no duplicate
    assert manager.get(home_id).history[-1]["action"] == "update"
    await consumer.consume(said("s:3", forget), memory)
    assert home_id not in live() and len(live()) == 1  # only the home was forgotten
    assert manager.deleted_items()[home_id].description == after  # a tombstone: restorable


def test_a_fact_that_holds_many_values_is_added_not_replaced() -> None:
    model = OfflineChatModel().bind_tools([create_memory, read_memories, update_memory])
    listing = "1 memories (ids are the numbers in brackets):\n## taste\n[1] User likes tea"
    reply = model.invoke(
        [
            HumanMessage("I like coffee."),
            AIMessage("", tool_calls=[{"name": "read_memories", "args": {}, "id": "r"}]),
            ToolMessage(listing, tool_call_id="r", name="read_memories"),
        ]
    )
    assert [(c["name"], c["args"]["content"]) for c in reply.tool_calls] == [
        ("create_memory", "User likes coffee")
    ]


def update_memory(id: int, content: str, reason: str) -> str:
    """Update a memory."""
    return "ok"


def test_the_offline_rules_file_facts_under_the_configured_sections(monkeypatch) -> None:
    mine = {
        "en": (persona.MemorySection("about me", "", "profile"),
               persona.MemorySection("likes", "", "preference"),
               persona.MemorySection("work items", "", "task")),
        "zh": (persona.MemorySection("我", "", "profile"),
               persona.MemorySection("爱好", "", "preference")),
    }  # fmt: skip
    monkeypatch.setattr("memory.integration.app_text._app_text", AppText(sections=mine))
    assert extract_memories("I live in Lisbon. I like tea. Let's write a poem.") == [
        ("User lives in Lisbon", "about me", "user"),
        ("User likes tea", "likes", "user"),
        ("Current task: write a poem", "work items", "branch"),
    ]
    assert {theme for _, theme in extract_facts("我住在上海。我喜欢喝茶。")} == {"我", "爱好"}


def test_a_forget_request_matches_memories_of_its_kind_when_no_word_is_shared() -> None:
    listed = {1: "User's address is 5 Rua Nova", 2: "User likes tea", 3: "用户在医院工作"}
    assert best_matches("where I live", listed) == [1]
    assert best_matches("我住在哪里", listed) == [1]
    assert best_matches("my job", listed) == [3]
    assert best_matches("the weather", listed) == []  # nothing shared: nothing deleted


def test_the_common_facts_of_a_chat_are_filed_in_both_languages() -> None:
    """Job, family, home, pets, likes: what people tell a chat about themselves, each filed in
    the third person and in the language it was said in; talk ("I think so", "我觉得") is not."""
    said = {
        "I work as a nurse.": "User works as a nurse",
        "I have two kids.": "User has two kids",
        "I live in Leeds.": "User lives in Leeds",
        "I have a dog named Max.": "User has a dog named Max",
        "I don't like olives.": "User does not like olives",
        "I grew up in Cork.": "User grew up in Cork",
        "My brother works at a bakery.": "User's brother works at a bakery",
        "I play the cello every weekend.": "User plays the cello every weekend",
        "我是护士。": "用户是护士",
        "我有两个孩子。": "用户有两个孩子",
        "我在医院工作。": "用户在医院工作",
        "我养了一只猫。": "用户有一只猫",
        "我不喜欢香菜。": "用户不喜欢香菜",
        "我每天走三英里。": "用户每天走三英里",
    }
    for text, expected in said.items():
        assert [description for description, _ in extract_facts(text)] == [expected], text
    for talk in ("I think so.", "I see.", "I have to go now.", "我觉得还行。", "我们明天见。"):
        assert extract_facts(talk) == [], talk


def test_the_answer_is_in_the_questions_language_whatever_the_memories_are_in() -> None:
    system = SystemMessage("Memories:\n<memories>\n- [身份] 用户住在上海\n</memories>")
    english = OfflineChatModel().invoke([system, HumanMessage("Where do I live?")]).content
    assert "Related memories:" in english and "相关记忆" not in english
    assert "用户住在上海" in english  # the memory is quoted as it is
    chinese = OfflineChatModel().invoke([system, HumanMessage("我住在哪里？")]).content
    assert "相关记忆" in chinese
