"""Bi-directional snapshot replication: one publisher, many subscribers (docs/semantics.md section 6)."""
