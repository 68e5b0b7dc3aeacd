"""The conversation archive from the graph's side: which archive a run uses, what of a turn is
archived, the search_conversations tool and the daily digests. Deleted with the archive feature."""
