"""Gulfstream's LangGraph layer: the chat graph, the memory_writer and memory_consolidator graphs,
settings, context and the command line. Imports memory/ and prompts/, never webapp/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graph.moved import MOVED_MODULES
from memory.lazy import keep_moved_modules, lazy_exports

if TYPE_CHECKING:
    from graph.agent import compile_graph
    from graph.cli.session import LocalSession
    from graph.context import Context
    from graph.settings import Settings, get_settings, use_settings

_LAZY = {
    "compile_graph": "graph.agent",
    "LocalSession": "graph.cli.session",
    "Context": "graph.context",
    "Settings": "graph.settings",
    "get_settings": "graph.settings",
    "use_settings": "graph.settings",
}
__getattr__ = lazy_exports(__name__, _LAZY)
keep_moved_modules(MOVED_MODULES)  # the paths of 0.1 (graph.handoff, …), for one release


__all__ = ["Context", "LocalSession", "Settings", "compile_graph", "get_settings", "use_settings"]
