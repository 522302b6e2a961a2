"""Counting a bulk pipe's loads in a test: the real pipe runs; the rows each call loaded are kept."""

from __future__ import annotations

from typing import Any

import pytest


def count_loads(monkeypatch: pytest.MonkeyPatch, pipe_class: type) -> list[int]:
    """The rows each call of ``pipe_class`` loaded, in order, for the rest of the test."""
    loaded: list[int] = []
    real = pipe_class.__call__

    def counting(self: Any, *args: Any, **kwargs: Any) -> int:
        loaded.append(real(self, *args, **kwargs))
        return loaded[-1]

    monkeypatch.setattr(pipe_class, "__call__", counting)
    return loaded
