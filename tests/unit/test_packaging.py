"""pyproject.toml describes a whole package: every distribution the code imports is declared (runtime or
an extra), and every data file under the package is matched by a package-data glob (setuptools globs
match in one directory each, which once left the grammar and the page's files out of the wheel).
scripts/wheel_smoke.sh proves the built wheel itself."""

from __future__ import annotations

import ast
import fnmatch
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "include" / "snaprepl"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _declared() -> dict[str, str]:
    """Declared distribution -> "runtime" or the extra that declares it."""
    found = {canonicalize_name(Requirement(r).name): "runtime" for r in PROJECT["project"]["dependencies"]}
    for extra, requirements in PROJECT["project"]["optional-dependencies"].items():
        for r in requirements:
            found.setdefault(canonicalize_name(Requirement(r).name), extra)
    return found


def _imported_modules() -> dict[str, set[str]]:
    """Absolute imported module -> the package files importing it (third parties only)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "snaprepl" and top not in sys.stdlib_module_names and top != "__future__":
                    found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def _distributions_of(module: str) -> set[str]:
    parts = module.split(".")
    if parts[:2] == ["airflow", "providers"]:
        return {canonicalize_name("apache-airflow-providers-" + "-".join(parts[2:k])) for k in range(3, len(parts) + 1)}
    if parts[0] == "airflow":
        return {"apache-airflow"}
    return {canonicalize_name(d) for d in packages_distributions().get(parts[0], [])}


def test_every_imported_distribution_is_declared() -> None:
    declared = _declared()
    missing = {
        module: sorted(files)
        for module, files in _imported_modules().items()
        if not _distributions_of(module) & set(declared)
    }
    assert missing == {}, "imported but not declared in pyproject.toml"


def test_optional_distributions_are_imported_lazily_and_tools_are_not_runtime() -> None:
    declared = _declared()
    assert {declared["webdav4"], declared["fsspec"]} == {"collections"}
    assert declared["apache-airflow-providers-openlineage"] == "lineage"
    assert not {"pytest", "ruff", "mypy", "import-linter", "hypothesis", "selenium"} & set(declared)


def test_every_data_file_of_the_package_is_package_data() -> None:
    globs = PROJECT["tool"]["setuptools"]["package-data"]["snaprepl"]
    data = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and not path.name.startswith(".")
    ]
    assert "statements/grammar.lark" in data and "airflow/ui/static/replication.js" in data
    # fnmatch's * crosses "/", setuptools' does not: compare directory by directory.
    unmatched = [
        f
        for f in data
        if not any(Path(f).parent == Path(g).parent and fnmatch.fnmatch(Path(f).name, Path(g).name) for g in globs)
    ]
    assert unmatched == []


def test_the_lock_satisfies_every_declared_requirement() -> None:
    locked = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, version = line.partition("==")
            locked[canonicalize_name(name)] = version.strip()
    requirements = [*PROJECT["project"]["dependencies"]]
    for extra in PROJECT["project"]["optional-dependencies"].values():
        requirements += extra
    parsed = [Requirement(r) for r in requirements]
    unmet = [str(r) for r in parsed if locked.get(canonicalize_name(r.name)) not in r.specifier]
    assert unmet == [], "requirements.txt does not satisfy these"
