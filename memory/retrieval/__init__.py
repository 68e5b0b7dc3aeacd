"""Memory retrieval: BM25 without a model, fused with the vectors of the semantic channel, the
hotness ranking and the recall log, and the LLM and hybrid retrievers built on it. Imports the
store, text and prompts; the LLM retrievers (llm.py, hybrid.py) need langchain-core and are not
imported here."""

from __future__ import annotations

from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.bm25_index import Bm25Index, IndexedMemory
from memory.retrieval.modes import RetrievalMode
from memory.retrieval.parsing import parse_indices
from memory.retrieval.retrievers import Retrievers

__all__ = [
    "Bm25Index",
    "IndexedMemory",
    "MechanicalRetriever",
    "RetrievalMode",
    "Retrievers",
    "parse_indices",
]
