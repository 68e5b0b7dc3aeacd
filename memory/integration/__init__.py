"""The memory library's LangGraph side, and its public face for an app (docs/API.md): the run
context and state the memory nodes read, the nodes themselves, the writer and consolidator graphs,
a run's memory, the models, the deployment's settings, and the text an app hands in (AppText).
May import LangGraph and LangChain; the core below it (memory/) does not."""

from memory.integration.answering import answer
from memory.integration.app_text import AppText, current_app_text, use_app_text
from memory.integration.chat_commands import MemoryCommands
from memory.integration.compaction import compaction_node  # feature: compaction
from memory.integration.context import MemoryContext
from memory.integration.conversations.search_tool import search_conversations  # feature: archive
from memory.integration.local_session import LocalSession, TurnReply
from memory.integration.models.embeddings import load_deployment_embeddings_in_background
from memory.integration.models.loading import check_deployment_models, load_chat_model
from memory.integration.prompt_layout import ChatPrompt
from memory.integration.reading import retrieve_memory
from memory.integration.run_memory import RunMemory, open_run_memory
from memory.integration.settings import Settings, get_settings, load_dotenv, use_settings
from memory.integration.state import InputState, MemoryState
from memory.integration.writing import consolidator_graph  # feature: consolidation
from memory.integration.writing.ltm_write import ltm_write
from memory.integration.writing.writer_graph import graph as memory_writer_graph
from memory.prompts.writer import DEFAULT_SECTIONS, MemorySection
from memory.prompts.writer_instructions import DEFAULT_WRITER_INSTRUCTIONS
from memory.store.item import local_date
from memory.text.fencing import escape_data
from memory.text.language import resolve_language
from memory.writer.staging import ToolEvent

memory_consolidator_graph = consolidator_graph.graph  # feature: consolidation

__all__ = [
    "DEFAULT_SECTIONS",
    "DEFAULT_WRITER_INSTRUCTIONS",
    "AppText",
    "ChatPrompt",
    "InputState",
    "LocalSession",
    "MemoryCommands",
    "MemoryContext",
    "MemorySection",
    "MemoryState",
    "RunMemory",
    "Settings",
    "ToolEvent",
    "TurnReply",
    "answer",
    "check_deployment_models",
    "compaction_node",  # feature: compaction
    "current_app_text",
    "escape_data",
    "get_settings",
    "load_chat_model",
    "load_deployment_embeddings_in_background",
    "load_dotenv",
    "local_date",
    "ltm_write",
    "memory_consolidator_graph",  # feature: consolidation
    "memory_writer_graph",
    "open_run_memory",
    "resolve_language",
    "retrieve_memory",
    "search_conversations",  # feature: archive
    "use_app_text",
    "use_settings",
]
