"""The memory library's LangGraph side, and its public face for an app (docs/API.md): the run
context and state the memory nodes read, the nodes themselves, the writer and consolidator graphs,
a user's and a run's memory, the models, the deployment's settings, and the text an app hands in
(AppText). May import LangGraph and LangChain; the core below it (memory/) does not."""

from memory.integration.answering import answer
from memory.integration.app_text import AppText
from memory.integration.compaction import compaction_node  # feature: compaction
from memory.integration.context import MemoryContext
from memory.integration.conversations.chat_search import search_archive  # feature: archive
from memory.integration.conversations.search_tool import search_conversations  # feature: archive
from memory.integration.local_session import LocalSession
from memory.integration.models.embeddings import prepare_deployment
from memory.integration.models.loading import load_chat_model
from memory.integration.prompt_layout import ChatPrompt
from memory.integration.reading import retrieve_memory
from memory.integration.run_memory import RunMemory, open_user_memory
from memory.integration.settings import Settings, get_settings, use_settings
from memory.integration.state import InputState, MemoryState
from memory.integration.writing import consolidator_graph  # feature: consolidation
from memory.integration.writing.ltm_write import ltm_write
from memory.integration.writing.write_now import write_now
from memory.integration.writing.writer_graph import graph as memory_writer_graph
from memory.prompts.writer import MemorySection
from memory.text.fencing import escape_data

memory_consolidator_graph = consolidator_graph.graph  # feature: consolidation

__all__ = [
    "AppText",
    "ChatPrompt",
    "InputState",
    "LocalSession",
    "MemoryContext",
    "MemorySection",
    "MemoryState",
    "RunMemory",
    "Settings",
    "answer",
    "compaction_node",  # feature: compaction
    "escape_data",
    "get_settings",
    "load_chat_model",
    "ltm_write",
    "memory_consolidator_graph",  # feature: consolidation
    "memory_writer_graph",
    "open_user_memory",
    "prepare_deployment",
    "retrieve_memory",
    "search_archive",  # feature: archive
    "search_conversations",  # feature: archive
    "use_settings",
    "write_now",
]
