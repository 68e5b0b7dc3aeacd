"""Memory retrieval: BM25 without a model, fused with the vectors of the semantic channel, the
hotness ranking and the recall log, and the LLM and hybrid retrievers built on it. Imports the
store, text and prompts; the LLM retrievers need langchain-core and are imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.lazy import lazy_exports
from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.bm25_index import Bm25Index, IndexedMemory
from memory.retrieval.modes import RetrievalMode
from memory.retrieval.parsing import parse_indices
from memory.retrieval.retrievers import Retrievers

if TYPE_CHECKING:
    from memory.retrieval.hybrid import HybridRetriever
    from memory.retrieval.llm import LLMRetriever, format_memory_lines

_LAZY = {
    "HybridRetriever": "memory.retrieval.hybrid",
    "LLMRetriever": "memory.retrieval.llm",
    "format_memory_lines": "memory.retrieval.llm",
}
__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "Bm25Index",
    "HybridRetriever",
    "IndexedMemory",
    "LLMRetriever",
    "MechanicalRetriever",
    "RetrievalMode",
    "Retrievers",
    "format_memory_lines",
    "parse_indices",
]
