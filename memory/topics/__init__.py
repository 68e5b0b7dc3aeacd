"""Entities and topics of a user's memories: who and what they are about (the topic table retrieval
routes by) and a summary of each. Imports retrieval, the store, text and prompts;
`LongTermMemory.topics` is its part of the facade."""

from memory.text.entities import Entity, extract_entities
from memory.topics.refresh import refresh_topic_summaries, topic_summary
from memory.topics.table import Topic, TopicTable

__all__ = [
    "Entity",
    "Topic",
    "TopicTable",
    "extract_entities",
    "refresh_topic_summaries",
    "topic_summary",
]
