"""Gulfstream prompts package."""
