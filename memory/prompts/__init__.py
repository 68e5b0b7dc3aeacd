"""The memory system's own model-facing text: the memory writer's and the LLM retriever's prompts,
the digest, consolidation and topic prompts, and the memory sections, en and zh. Imports nothing."""
