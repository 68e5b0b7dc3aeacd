"""The memory system's own prompts: the memory writer's and the LLM retriever's, en and zh."""
