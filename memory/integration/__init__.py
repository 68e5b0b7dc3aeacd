"""The memory library's LangGraph side, and its public face for an app (docs/API.md): the run
context and state the memory nodes read, the nodes themselves, the writer and consolidator graphs,
a run's memory, the models, the deployment's settings, and the text an app hands in (AppText).
May import LangGraph and LangChain; the core below it (memory/) does not."""

from memory.integration.admin.archive import search_command  # feature: archive
from memory.integration.admin.consolidate import tidy_up  # feature: consolidation
from memory.integration.app_text import AppText, current_app_text, use_app_text
from memory.integration.compaction import compaction_node  # feature: compaction
from memory.integration.context import MemoryContext
from memory.integration.conversations.search_tool import search_conversations  # feature: archive
from memory.integration.lineage import alineage_of, current_lineage
from memory.integration.models.embeddings import (
    deployment_embeddings,
    load_deployment_embeddings_in_background,
)
from memory.integration.models.loading import (
    check_deployment_models,
    load_chat_model,
    split_model_name,
)
from memory.integration.prompt_budget import (
    budget_for,
    cut_on_sentence,
    fit_to_budget,
    latest_user_text,
    summary_limit,
)
from memory.integration.reading import retrieve_memory
from memory.integration.run_memory import RunMemory, open_run_memory, writer_consumer
from memory.integration.settings import Settings, get_settings, load_dotenv, use_settings
from memory.integration.state import InputState, MemoryState
from memory.integration.writing import consolidator_graph  # feature: consolidation
from memory.integration.writing.ltm_write import ltm_write
from memory.integration.writing.writer_graph import graph as memory_writer_graph
from memory.prompts.writer import DEFAULT_SECTIONS, MemorySection
from memory.store.item import local_date
from memory.text.fencing import escape_data
from memory.text.language import resolve_language
from memory.usage.counts import PURPOSES, UsageMeter, added_cost, describe, from_dicts
from memory.usage.metering import metered
from memory.writer.local import local_writer
from memory.writer.protocols import is_small_model
from memory.writer.staging import ToolEvent
from memory.writer.text_calls import parse_text_tool_calls

memory_consolidator_graph = consolidator_graph.graph  # feature: consolidation

__all__ = [
    "DEFAULT_SECTIONS",
    "PURPOSES",
    "AppText",
    "InputState",
    "MemoryContext",
    "MemorySection",
    "MemoryState",
    "RunMemory",
    "Settings",
    "ToolEvent",
    "UsageMeter",
    "added_cost",
    "alineage_of",
    "budget_for",
    "check_deployment_models",
    "compaction_node",  # feature: compaction
    "current_app_text",
    "current_lineage",
    "cut_on_sentence",
    "deployment_embeddings",
    "describe",
    "escape_data",
    "fit_to_budget",
    "from_dicts",
    "get_settings",
    "is_small_model",
    "latest_user_text",
    "load_chat_model",
    "load_deployment_embeddings_in_background",
    "load_dotenv",
    "local_date",
    "local_writer",
    "ltm_write",
    "memory_consolidator_graph",  # feature: consolidation
    "memory_writer_graph",
    "metered",
    "open_run_memory",
    "parse_text_tool_calls",
    "resolve_language",
    "retrieve_memory",
    "search_command",  # feature: archive
    "search_conversations",  # feature: archive
    "split_model_name",
    "summary_limit",
    "tidy_up",  # feature: consolidation
    "use_app_text",
    "use_settings",
    "writer_consumer",
]
