"""Gulfstream's LangGraph layer: the chat graph, the memory_writer graph, settings and CLI."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'graph' has no attribute {name!r}")


__all__ = ["Context", "LocalSession", "Settings", "compile_graph", "get_settings", "use_settings"]
