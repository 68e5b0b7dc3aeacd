"""Compaction's choices: the budget a deployment sets, where a conversation may be cut, and what
is sent when it does not fit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from graph.compaction import choose_cutoff
from graph.prompt_budget import cut_on_sentence, fit_to_budget, prompt_tokens
from graph.settings import Settings
from graph.summarizer import RunningSummary, summarize
from tests.fakes import EchoingModel, ScriptedModel


def test_the_budget_a_deployment_sets() -> None:
    assert Settings().context_budget(128_000) == 64_000  # auto: half the model's window
    assert Settings().context_budget(None) == 16_000  # a window nobody knows
    assert Settings(context_budget_tokens="3000").context_budget(128_000) == 3000
    assert Settings(context_budget_tokens="0.25").context_budget(100_000) == 25_000
    assert Settings(context_budget_tokens="off").context_budget(100_000) is None
    for bad in ("lots", "-1", "12.5", "50"):
        with pytest.raises(ValueError, match="GULFSTREAM_CONTEXT_BUDGET_TOKENS"):
            Settings.from_env({"GULFSTREAM_CONTEXT_BUDGET_TOKENS": bad})


def conversation(shape: list[tuple[int, int]]) -> list[AnyMessage]:
    """Turns of (tool rounds, words per message): user, [AI calls, tool results]…, AI reply."""
    messages: list[AnyMessage] = []
    for turn, (rounds, words) in enumerate(shape):
        messages.append(HumanMessage("word " * words, id=f"h{turn}"))
        for r in range(rounds):
            calls = [{"name": "get_current_time", "args": {}, "id": f"c{turn}-{r}-{k}"}
                     for k in range(2)]  # fmt: skip
            messages.append(AIMessage("", tool_calls=calls, id=f"a{turn}-{r}"))
            messages += [ToolMessage("result " * words, tool_call_id=c["id"], id=f"t{c['id']}")
                         for c in calls]  # fmt: skip
        messages.append(AIMessage("reply " * words, id=f"r{turn}"))
    return messages


def paired(messages: list[AnyMessage]) -> bool:
    asked = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return asked == answered


shapes = st.lists(st.tuples(st.integers(0, 2), st.integers(1, 60)), min_size=1, max_size=25)


@settings(max_examples=200, deadline=None)
@given(shape=shapes, room=st.integers(0, 3000), keep=st.integers(1, 12))
def test_a_cut_never_splits_a_tool_round_nor_drops_the_latest_question(
    shape: list[tuple[int, int]], room: int, keep: int
) -> None:
    messages = conversation(shape)
    cutoff = choose_cutoff(messages, room, keep)
    gone, kept = messages[:cutoff], messages[cutoff:]
    assert paired(gone) and paired(kept)
    latest = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    assert cutoff <= latest
    assert not kept or isinstance(kept[0], HumanMessage)
    if cutoff and len(shape) > 1:
        assert len(kept) >= min(keep, len(messages) - cutoff)


@settings(max_examples=200, deadline=None)
@given(shape=shapes, budget=st.integers(50, 4000))
def test_what_is_sent_fits_or_is_the_latest_turn(shape: list[tuple[int, int]], budget: int) -> None:
    messages = conversation(shape)
    sent = fit_to_budget("system prompt", messages, budget)
    latest = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    assert any(m.id == messages[latest].id for m in sent)
    assert paired(sent) and isinstance(sent[0], HumanMessage)
    assert sent == messages[len(messages) - len(sent) :]  # the most recent ones, in order
    within = prompt_tokens("system prompt", sent) <= budget
    assert within or sent == messages[latest:]
    assert count_tokens_approximately(sent) <= count_tokens_approximately(messages)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("ab .。!\n上海"), max_size=400), limit=st.integers(10, 300))
def test_a_cut_summary_fits_and_is_the_start_of_the_text(text: str, limit: int) -> None:
    cut = cut_on_sentence(text, limit)
    assert len(cut) <= limit
    assert text.strip().startswith(cut.removesuffix("…").rstrip())


def test_a_verbose_summary_is_asked_again_then_cut_on_a_sentence() -> None:
    model = EchoingModel(times=3)  # three times as long as its prompt
    span = [HumanMessage(f"Turn {i}: my dog Rex ran to the river. It rained.") for i in range(40)]
    made = summarize(model, RunningSummary("An old summary. " * 400), span, 800)
    assert len(made.text) <= 800 and made.text.endswith(".") and made.cut
    assert len(model.calls) == 2  # summarised, then asked once to shorten
    assert {call["max_tokens"] for call in model.calls} == {800 // 4 + 50}
    for answer in ("", "   "):
        with pytest.raises(ValueError, match="answered nothing"):
            summarize(ScriptedModel(messages=iter([answer])), RunningSummary(), span, 800)
