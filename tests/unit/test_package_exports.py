"""``snaprepl``'s exports are lazy: importing the package (or any module of it) loads nothing else."""

from __future__ import annotations

import subprocess
import sys

import pytest

import snaprepl


def test_importing_the_package_loads_none_of_its_modules() -> None:
    code = "import sys, snaprepl; print(sorted(m for m in sys.modules if m.startswith('snaprepl')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['snaprepl']"


@pytest.mark.parametrize("name", snaprepl.__all__)
def test_every_export_resolves_to_its_module_s_object(name: str) -> None:
    value = getattr(snaprepl, name)
    assert value.__module__.startswith("snaprepl."), name
    assert name in dir(snaprepl)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'repl_nothing'"):
        snaprepl.repl_nothing  # noqa: B018
