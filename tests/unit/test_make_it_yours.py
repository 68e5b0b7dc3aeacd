"""A fork's changes take effect everywhere: the sections and persona of prompts/persona.py, and
features turned off leave no tool, no prompt sentence and no node behind."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from graph import nodes
from graph.agent import compile_graph
from graph.cli.session import LocalSession
from graph.context import Context
from graph.prompting import build_system_prompt
from memory.integration import AppText, run_memory
from memory.integration.settings import Settings, get_settings, use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from memory.store.factory import open_memory_manager
from memory.writer.consumer import MemoryConsumer
from memory.writer.local import local_writer
from prompts import persona
from prompts.persona import MemorySection
from tests.fakes import ScriptedModel
from tests.unit.test_writer_tools import MONDAY_MORNING, a_turn, call, step

MINE = {
    "en": (
        MemorySection("about me", "who I am", "profile"),
        MemorySection("likes", "what I like", "preference"),
        MemorySection("work items", "what is to be done", "task"),
    ),
    "zh": (MemorySection("关于我", "我是谁", "profile"), MemorySection("爱好", "", "preference")),
}


class ToolRecorder(ScriptedModel):
    """A scripted chat model that keeps the names of the tools each call bound."""

    bound: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolRecorder:
        self.bound.append([getattr(tool, "name", getattr(tool, "__name__", "")) for tool in tools])
        return self


async def one_turn(monkeypatch: pytest.MonkeyPatch, **settings: Any) -> tuple[str, list[str], Any]:
    """One offline-written turn with a scripted chat model: its system prompt, its bound tools
    and the compiled graph."""
    model = ToolRecorder(messages=iter([AIMessage("Hello.")]))
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **kw: model)
    with use_settings(write_mode="inline", **settings):
        app = compile_graph(checkpointer=InMemorySaver())
        await app.ainvoke(
            {"messages": [{"role": "user", "content": "Hello there."}]},
            {"configurable": {"thread_id": "t1"}},
            context=Context(user_id="ada", model="offline/rules"),
        )
    [system] = [m for m in model.seen[0] if isinstance(m, SystemMessage)]
    return str(system.content), model.bound[0], app


@pytest.mark.uses("archive")
async def test_archive_off_binds_no_search_conversations_and_never_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompt, tools, _ = await one_turn(monkeypatch)
    assert "search_conversations" in tools and "search_conversations" in prompt  # on by default
    prompt, tools, _ = await one_turn(monkeypatch, conversation_archive="off")
    assert "search_conversations" not in tools
    assert "search_conversations" not in prompt and "earlier conversations" not in prompt
    assert "search_memory" in tools and "search_memory" in prompt  # the rest stays


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_compacted_conversations_summary_names_search_conversations_only_when_bound(
    language: str,
) -> None:
    summary = "The user asked about trains to Porto."
    with_archive = build_system_prompt(
        Context(), [], {}, language, summary=summary, tools=("search_conversations",)
    )
    assert summary in with_archive and "search_conversations" in with_archive
    without = build_system_prompt(Context(), [], {}, language, summary=summary, tools=())
    assert summary in without and "search_conversations" not in without


@pytest.mark.uses("topics")
async def test_topics_have_a_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    _, tools, _ = await one_turn(monkeypatch)
    assert "memories_about" in tools
    _, tools, _ = await one_turn(monkeypatch, topics=False)
    assert "memories_about" not in tools
    opened = registry.open(get_settings().memory_backend, "ada")  # the run's memory
    assert opened.retrievers.sections is persona.SECTIONS  # the LLM modes' examples follow them
    assert Settings.from_env({"GULFSTREAM_TOPICS": "off"}).topics is False
    assert opened.retrievers.topic_routing is False  # nor does retrieval route by topic


@pytest.mark.uses("topics")
def test_without_topic_routing_a_question_about_someone_is_ranked_like_any_other(
    tmp_path: Path,
) -> None:
    manager = open_memory_manager(f"yaml:{tmp_path}/m", "ada")
    manager.add("User's mom is recovering from knee surgery", "family")
    manager.add("妈妈最近在学太极拳", "家人")
    memory = LongTermMemory(manager, embeddings="off")
    found = memory.get_related_memory_from("我妈怎么样？", "mechanical")
    assert len(found) == 2  # the topic "mom" gathers both languages
    memory.retrievers.topic_routing = False
    found = memory.get_related_memory_from("我妈怎么样？", "mechanical")
    assert [m["description"] for m in found] == ["妈妈最近在学太极拳"]  # BM25 alone


async def test_compaction_off_leaves_the_compact_node_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, app = await one_turn(monkeypatch, context_budget_tokens="off")
    drawn = app.get_graph()
    assert "compact" not in drawn.nodes
    assert ("retrieve_memory", "agent") in {(e.source, e.target) for e in drawn.edges}
    _, _, default = await one_turn(monkeypatch)  # feature: compaction
    assert "compact" in default.get_graph().nodes  # feature: compaction


def test_the_old_archive_variable_still_works_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="GULFSTREAM_CONVERSATION_ARCHIVE"):
        old = Settings.from_env({"GULFSTREAM_ARCHIVE": "off"})
    assert old.conversation_archive == "off" and not old.archive_on
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name alone: no warning
        new = Settings.from_env({"GULFSTREAM_CONVERSATION_ARCHIVE": "sqlite:/tmp/x"})
    assert new.conversation_archive == "sqlite:/tmp/x"
    both = Settings.from_env(
        {"GULFSTREAM_ARCHIVE": "off", "GULFSTREAM_CONVERSATION_ARCHIVE": "auto"}
    )  # the new name wins
    assert both.archive_on


async def test_the_writer_is_given_the_configured_sections(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("memory.integration.app_text._app_text", AppText(sections=MINE))
    with use_settings(memory_capacity=1234):  # a fresh writer for these settings
        assert run_memory.writer_consumer().sections is MINE
    manager = open_memory_manager(f"yaml:{tmp_path}/m", "ada")
    for language, text in (("en", "I am Ada."), ("zh", "我叫小明。")):
        model = ScriptedModel(messages=iter([AIMessage("no changes")]))
        consumer = MemoryConsumer(model, sections=MINE, clock=lambda: MONDAY_MORNING)
        await consumer.consume(a_turn("ada", f"turn-{language}", text), LongTermMemory(manager))
        system = str(model.seen[0][0].content)
        for section in MINE[language]:
            assert f'"{section.name}"' in system
        others = MINE["zh" if language == "en" else "en"]
        assert all(f'"{section.name}"' not in system for section in others)


async def test_the_core_context_lists_the_configured_profile_sections_first(
    tmp_path: Path,
) -> None:
    manager = open_memory_manager(f"yaml:{tmp_path}/m", "ada")
    script = [
        step(call("create_memory", content="The user likes tea.", section="likes")),
        step(call("create_memory", content="The user is Ada.", section="about me")),
        AIMessage("done"),
    ]
    consumer = MemoryConsumer(ScriptedModel(messages=iter(script)), sections=MINE)
    await consumer.consume(a_turn("ada", "turn-1", "I'm Ada; I like tea."), LongTermMemory(manager))
    assert manager.get_core_context()["human"] == "The user is Ada.; The user likes tea."


def test_a_fact_enters_the_prompt_once() -> None:
    core = {"human": "The user is Ada.; The user lives in Lisbon."}
    lisbon = {"id": "1", "theme": "identity", "description": "The user lives in Lisbon."}
    prompt = build_system_prompt(Context(), [lisbon], core, "en")
    assert prompt.count("The user lives in Lisbon.") == 1
    assert "About the user: The user is Ada." in prompt


async def test_the_default_persona_is_the_prompts_not_copied_into_the_store(
    monkeypatch: pytest.MonkeyPatch, clean_process: Settings
) -> None:
    monkeypatch.setattr(persona, "PERSONA", {"en": "You are Captain Gull.", "zh": "你是海鸥船长。"})
    prompt, _, _ = await one_turn(monkeypatch)
    assert prompt.startswith("You are Captain Gull.")
    manager = open_memory_manager(clean_process.memory_backend, "ada")
    manager.add("The user is Ada.", "identity")
    assert manager.get_core_context().get("persona", "") == ""
    manager.set_core_context(persona="You are Ada's tutor.")  # an edited one is the user's
    edited = build_system_prompt(Context(), [], manager.get_core_context(), "en")
    assert edited.startswith("You are Ada's tutor.") and "Captain Gull" not in edited


async def test_leaving_a_chat_session_stops_its_queue(tmp_path: Path) -> None:
    # `make chat` ended by /quit logged "Task was destroyed but it is pending!": the session
    # started its queue without registering it, so the exit drain never stopped it.
    async with LocalSession(Context(user_id="ada", model="offline/rules"), tmp_path) as session:
        memory = session.memory
        assert memory is not None and memory.writing
    assert local_writer.stop(timeout=10)
    assert not memory.writing


def test_mypy_ignores_missing_imports_of_third_party_modules_only() -> None:
    # With the ignore global, deleting memory/topics/ left `import webapp.app` broken and
    # `make lint` passing.
    import tomllib

    config = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]
    assert "ignore_missing_imports" not in config["mypy"]
    first_party = tuple(config["mypy"]["packages"])
    for override in config["mypy"].get("overrides", []):
        modules = override["module"]
        for module in [modules] if isinstance(modules, str) else modules:
            assert module.split(".")[0] not in first_party, module


def test_the_minimal_preset_of_env_example_names_real_settings_and_turns_features_off() -> None:
    import dataclasses
    import re

    from graph.agent import build
    from graph.tools import chat_tools

    text = (Path(__file__).parents[2] / ".env.example").read_text()
    preset = dict(re.findall(r"^# (GULFSTREAM_[A-Z_]+)=(\S+)", text.split("minimal bot")[1], re.M))
    known = {f"GULFSTREAM_{f.name.upper()}" for f in dataclasses.fields(Settings)}
    assert preset and set(preset) <= known, set(preset) - known
    minimal = Settings.from_env(preset)
    assert not (minimal.archive_on or minimal.compaction_on or minimal.digests)
    assert not (minimal.topics or minimal.admission or minimal.consolidate_every_writes)
    assert "compact" not in build(minimal).nodes
    assert not {"search_conversations", "memories_about"} & {
        tool.__name__ for tool in chat_tools(minimal)
    }


def test_no_unit_test_runs_make() -> None:
    # `make` from a unit test fails in a checkout without .venv and made `make unit` slow.
    import ast

    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List) and node.elts:
                first = node.elts[0]
                is_make = isinstance(first, ast.Constant) and first.value == "make"
                assert not is_make, f"{path.name}:{node.lineno} runs make"


def test_the_llm_retrievers_examples_name_the_configured_sections(tmp_path: Path) -> None:
    from memory.prompts.retrieval import find_related_memory_prompts
    from memory.retrieval.llm import LLMRetriever
    from tests.fakes import ScriptedAnswers

    plain, _ = find_related_memory_prompts("en")
    assert "(taste, " in plain and "taste themes" in plain  # the examples' own themes
    manager = open_memory_manager(f"yaml:{tmp_path}/m", "ada")
    manager.add("The user likes oolong tea.", "likes")
    model = ScriptedAnswers("[0]")
    found = LLMRetriever(manager, model, sections=MINE).retrieve("what tea do I like?")
    assert [m["description"] for m in found] == ["The user likes oolong tea."]
    system = str(model.calls[0][0].content)
    assert "(likes, " in system and "likes themes" in system and "(work items, " in system
    assert "(taste, " not in system and "(project, " not in system
    assert "(moment, " in system  # no event section configured: the example keeps its own
    chinese, _ = find_related_memory_prompts("zh", MINE)
    assert "(爱好, " in chinese and "“爱好”分区" in chinese and "(品味, " not in chinese
