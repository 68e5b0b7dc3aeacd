"""What keeps one user's memory clean over time: the recall and hotness upkeep, consolidation
(consolidation/) and topics (topics/), each an optional feature imported on first use. Imports
the store, text and retrieval, never the facade back."""
