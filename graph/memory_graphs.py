"""The memory library's background graphs, served beside the chat graph (langgraph.json): the
memory writer and the consolidator, run with this app's sections (graph/__init__.py)."""

import graph  # noqa: F401  (its __init__ hands the library this app's sections)
from memory.integration import memory_consolidator_graph, memory_writer_graph

__all__ = ["memory_consolidator", "memory_writer"]

memory_writer = memory_writer_graph
memory_consolidator = memory_consolidator_graph  # feature: consolidation
