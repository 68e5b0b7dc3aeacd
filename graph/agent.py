"""The chat graph: START → retrieve_memory → [compact] → agent ⇄ tools → ltm_write → END."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from graph.context import Context
from graph.nodes import agent, route_after_agent
from graph.prompting import chat_prompt
from graph.reminders import route_start, say_reminder
from graph.state import AppInput, State
from graph.tools import chat_tools
from memory.integration import (
    Settings,
    compaction_node,  # feature: compaction
    get_settings,
    ltm_write,
    prepare_deployment,
    retrieve_memory,
)

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime


def build(settings: Settings) -> StateGraph[State, Context, AppInput, State]:
    """The chat graph's nodes for the features `settings` turn on: no `compact` node without
    compaction, no tool of a feature that is off."""
    builder = StateGraph(State, input_schema=AppInput, context_schema=Context)
    builder.add_node("retrieve_memory", retrieve_memory)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(chat_tools(settings)))
    builder.add_node("ltm_write", ltm_write)
    # A scheduled reminder's run says it and ends (with reminders off, it drops them all).
    builder.add_node("say_reminder", say_reminder)
    builder.add_conditional_edges(START, route_start, ["say_reminder", "retrieve_memory"])
    builder.add_edge("say_reminder", END)
    before_agent = "retrieve_memory"
    if settings.compaction_on:  # feature: compaction
        builder.add_node("compact", compaction_node(chat_prompt, chat_tools))  # feature: compaction
        builder.add_edge("retrieve_memory", "compact")  # feature: compaction
        before_agent = "compact"  # feature: compaction
    builder.add_edge(before_agent, "agent")
    builder.add_conditional_edges("agent", route_after_agent)
    builder.add_edge("tools", "agent")
    builder.add_edge("ltm_write", END)
    return builder


def compile_graph(
    checkpointer: Any = None, store: Any = None
) -> CompiledStateGraph[State, Context, AppInput, State]:
    """The graph with your own checkpointer/store, for the CLI, notebooks and tests, shaped by
    the current settings.

    `langgraph dev` and LangGraph Platform bring their own, and refuse a graph that has one:
    they load `graph` below (shaped by the server's settings when it starts).
    """
    return build(get_settings()).compile(checkpointer=checkpointer, store=store, name="Gulfstream")


# The settings as the server starts, read without caching them (tests swap them later).
graph = build(Settings.from_env()).compile(name="Gulfstream")
# Importing the graph is a process (or server) starting: the offline embedding model loads now,
# in the background, not inside the first user's first reply; and under the server a model the
# deployment names whose package or key is missing stops it now, not every user's first message
# (the CLI imports this module too, and checks in its main: one line and exit code 2).
prepare_deployment(check_models="langgraph_api" in sys.modules)


def served_graph(
    runtime: ServerRuntime,
) -> CompiledStateGraph[State, Context, AppInput, State]:
    """`graph` as `langgraph dev` and LangGraph Platform serve it (langgraph.json names this).

    The server drops the context keys its schema does not list before the graph runs, so a typo
    (`usr_id`) or a deployment setting (`memory_backend`) would run silently under the defaults.
    It hands this factory the context as the caller sent it (the assistant's merged with the
    run's, or a run's `configurable` when it has no context): a field that is not the graph's is
    refused here, by name, and the run fails with that error.
    """
    sent = getattr(runtime, "context", None)
    if isinstance(sent, dict) and sent:
        Context(**sent)  # raises ValueError naming the field
    running = getattr(runtime, "access_context", "") == "threads.create_run"
    if running and get_settings().user_id_required() and not _names_a_user(sent):
        raise ValueError(NO_USER)
    return graph


NO_USER = (
    "Context.user_id is required by this deployment (GULFSTREAM_REQUIRE_USER_ID): pass "
    "context={'user_id': ...}; without it the run would read and write the memories of user "
    "'default', which every caller naming no user shares"
)


def _names_a_user(sent: Any) -> bool:
    """Whether the run's context (or the deployment's GULFSTREAM_USER_ID) gives a user id."""
    named = sent.get("user_id") if isinstance(sent, dict) else None
    return bool(str(named or "").strip() or os.environ.get("GULFSTREAM_USER_ID", "").strip())
