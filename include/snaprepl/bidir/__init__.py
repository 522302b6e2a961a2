"""Bi-directional snapshot replication: one publisher, many subscribers (SEMANTICS section 6)."""
