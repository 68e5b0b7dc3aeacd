"""The memory library's background graphs, served beside the chat graph (langgraph.json): the
memory writer and the consolidator, run with this app's sections (graph/__init__.py)."""

import graph  # noqa: F401  (its __init__ hands the library this app's sections)
from memory import integration

memory_writer = integration.memory_writer_graph
memory_consolidator = integration.memory_consolidator_graph  # feature: consolidation
