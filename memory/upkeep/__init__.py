"""What keeps one user's memory clean over time: consolidation passes (consolidation/) and when they
are due. Imports the writer, topics, retrieval, the store and text; what it reads of a memory is
named in `upkept.py`, never the facade itself."""
