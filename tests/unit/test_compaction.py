"""Compaction's quick checks: the budget a deployment sets and a verbose summary cut to size (the
property runs are in tests/integration: test_prompt_budget_properties, test_compaction_cutoff)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from memory.integration.settings import Settings
from memory.integration.summarizer import RunningSummary, summarize
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
