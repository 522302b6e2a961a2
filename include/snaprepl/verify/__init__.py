"""Verify and repair: compare a copy with its source, and fix only the rows that differ."""
