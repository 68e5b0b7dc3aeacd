"""Import a user's past conversations (ChatGPT, Claude, JSONL) into the archive and memory."""
