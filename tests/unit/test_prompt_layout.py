"""The chat prompt's layout: the same prefix from turn to turn, so a server's prompt cache holds."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

import graph.nodes as nodes
import graph.prompting as prompting
import memory.integration.compaction as compaction  # feature: compaction
import memory.integration.run_memory as run_memory
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.models.offline import OfflineChatModel
from memory.integration.prompt_layout import ChatPrompt, request_messages, splits_prompt
from memory.integration.settings import Settings, use_settings
from tests.fakes import ScriptedModel

TURNS = ("My dog is called Rex.", "I moved to Lisbon last year.", "What is my dog called?")


@pytest.fixture
def inline(tmp_path: Path, clean_process: Settings) -> Iterator[Settings]:
    with use_settings(clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline") as s:
        yield s


@pytest.fixture
def ticking_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A minute passes between turns: the time in the prompt is new every turn."""
    minutes = itertools.count()
    monkeypatch.setattr(
        prompting, "current_time_text", lambda *_: f"Friday 2026-12-04 10:{next(minutes):02d}"
    )


def as_sent(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """What the server reads of a request: each message's role and text."""
    return [(m.type, str(m.content)) for m in messages]


def context_at(request: list[BaseMessage]) -> int:
    """Where this turn's context starts: the second system message (the end when none)."""
    systems = [i for i, m in enumerate(request) if isinstance(m, SystemMessage)]
    return systems[1] if len(systems) > 1 else len(request)


async def chat(model_name: str) -> ScriptedModel:
    model = ScriptedModel(messages=iter(["Nice!", "Lisbon is lovely.", "He is called Rex."]))
    app = compile_graph(checkpointer=InMemorySaver())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nodes, "load_chat_model", lambda name, **_: model)
        # The scripted model stands in for one this machine cannot build (no package, no key);
        # anything else that loads the named model gets the offline model, as without a key.
        patch.setattr(run_memory, "check_run_models", lambda context: None)
        offline = lambda name, **_: OfflineChatModel()  # noqa: E731  # feature: compaction
        patch.setattr(compaction, "load_chat_model", offline)  # feature: compaction
        for text in TURNS:
            await app.ainvoke(
                {"messages": [{"role": "user", "content": text}]},
                {"configurable": {"thread_id": "t1"}},
                context=Context(user_id="dana", model=model_name, writer_model="offline/rules"),
            )
    return model


async def test_each_turn_repeats_the_last_request_up_to_its_context(inline, ticking_clock):
    model = await chat("openai/gpt-4o-mini")
    for before, after in itertools.pairwise(model.seen):
        kept = as_sent(before)[: context_at(before)]
        assert as_sent(after)[: len(kept)] == kept  # the server's cache covers all of it
    last = model.seen[-1]
    assert isinstance(last[-1], HumanMessage) and last[-1].content == TURNS[-1]
    assert "Rex" in last[context_at(last)].content  # the memory, late
    contexts = {request[context_at(request)].content for request in model.seen}
    assert len(contexts) == len(TURNS)  # the time moved every turn, the prefix did not
    assert "Rex" not in last[0].content and "Current time" not in last[0].content


async def test_one_system_message_for_a_provider_that_wants_it_first(inline, ticking_clock):
    model = await chat("anthropic/claude-sonnet-4-5")
    for request in model.seen:
        systems = [m for m in request if isinstance(m, SystemMessage)]
        assert systems == [request[0]] and "Current time" in systems[0].content
    first, second = model.seen[0], model.seen[1]  # the time moved: the first message changed
    assert first[0].content != second[0].content


async def test_the_layout_is_the_servers_choice(inline, ticking_clock):
    with use_settings(prompt_layout="single"):
        model = await chat("openai/gpt-4o-mini")
    assert all(context_at(request) == len(request) for request in model.seen)
    with pytest.raises(ValueError, match="GULFSTREAM_PROMPT_LAYOUT must be one of"):
        Settings(prompt_layout="late")


def test_split_and_single_send_the_same_words():
    prompt = ChatPrompt("Be kind.", "Current time: 10:00\n\n<memories>- a dog</memories>")
    history: list[Any] = [HumanMessage("hi"), HumanMessage("my dog?")]
    split = request_messages(prompt, history, split=True, note="\n\nAnswer now.")
    single = request_messages(prompt, history, split=False, note="\n\nAnswer now.")
    assert [m.content for m in split] == ["Be kind.", "hi", prompt.context + "\n\nAnswer now.",
                                          "my dog?"]  # fmt: skip
    assert single[0].content == prompt.whole + "\n\nAnswer now." and single[1:] == history
    assert splits_prompt("openai/gpt-4o-mini", "auto")
    assert not splits_prompt("anthropic/claude-sonnet-4-5", "auto")
    assert splits_prompt("anthropic/claude-sonnet-4-5", "split")
