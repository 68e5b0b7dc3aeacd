"""Gulfstream webapp package."""
