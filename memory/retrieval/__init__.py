"""Memory retrieval (the uplink): BM25, LLM and hybrid retrievers behind one mode switch."""

from memory.retrieval.bm25_index import Bm25Index, IndexedMemory
from memory.retrieval.dispatch import Retrievers, get_related_memories, shared_retrievers
from memory.retrieval.hybrid import HybridRetriever
from memory.retrieval.llm import LLMRetriever, format_memory_lines
from memory.retrieval.mechanical import MechanicalRetriever
from memory.retrieval.modes import RetrievalMode
from memory.retrieval.parsing import parse_indices

__all__ = [
    "Bm25Index",
    "HybridRetriever",
    "IndexedMemory",
    "LLMRetriever",
    "MechanicalRetriever",
    "RetrievalMode",
    "Retrievers",
    "format_memory_lines",
    "get_related_memories",
    "parse_indices",
    "shared_retrievers",
]
