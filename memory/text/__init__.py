"""Text as the memory system reads it: the tokenizer, the language rule, statement kinds,
entities, fences for prompts and chat messages. Pure functions without I/O; imports nothing else
of memory/ but memory.errors."""
