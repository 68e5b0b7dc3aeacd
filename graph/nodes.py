"""The chat agent node: the chat model answers with this app's tools and prompt."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.runtime import Runtime

from graph.context import Context
from graph.prompting import chat_prompt
from graph.state import State
from graph.tools import chat_tools
from memory.integration import answer, load_chat_model


def agent(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Answer the user: the chat model with the chat tools of the features that are on, the
    memories, core context and running summary in its system prompt (graph/prompting.py), in
    the library's bounded tool loop (`memory.integration.answer`)."""
    context = runtime.context if runtime.context is not None else Context()
    # No client retries: `answer` retries once, then fails naming the provider's answer (the
    # client's own retries on top made a failing local server answer six times).
    model = load_chat_model(context.model, max_retries=0)
    return answer(model, state, context, chat_tools(), chat_prompt)


def route_after_agent(state: State) -> Literal["tools", "agent", "ltm_write"]:
    """Run the tools the model asked for; back to the model when its repeated calls were
    answered from earlier results; else finish the turn."""
    last = state.messages[-1] if state.messages else None
    if isinstance(last, ToolMessage):
        return "agent"
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "ltm_write"
