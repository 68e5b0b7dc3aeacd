"""Gulfstream graph package."""
