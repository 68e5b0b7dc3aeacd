"""What is sent when a conversation does not fit, over many generated conversations: the latest
turn always, tool rounds never split, and a cut summary is the start of its text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from memory.integration.prompt_budget import cut_on_sentence, fit_to_budget, prompt_tokens


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
