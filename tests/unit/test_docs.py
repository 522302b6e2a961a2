"""The README stays a short front page whose links resolve and whose test command is CI's; the docs
site's generated reference pages cover the whole registry, every setting and every subcommand; and
every "docs/semantics.md section N" the code cites exists. `mkdocs build --strict` (scripts/test.sh)
checks the links inside docs/."""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import fields
from pathlib import Path
from types import ModuleType

from snaprepl import api
from snaprepl.settings import Settings

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
#: The issue's bound for the front page; everything else belongs in docs/.
README_MAX_BYTES = 10_000
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move the detail into docs/"


def test_readme_gives_the_command_ci_runs() -> None:
    """.ci/run ends in `exec <command>`: the README's two commands must include that command verbatim."""
    ci = (REPO / ".ci" / "run").read_text()
    execs = [line.split(None, 1)[1] for line in ci.splitlines() if line.startswith("exec ")]
    assert len(execs) == 1, ".ci/run should end in one exec of the test command"
    commands = {" ".join(line.split("#")[0].split()) for line in README.read_text().splitlines()}
    assert " ".join(execs[0].split()) in commands, f"README lacks {execs[0]!r}"


def test_readme_links_resolve() -> None:
    text = README.read_text()
    links = [target for target in _LINK.findall(text) if not re.match(r"[a-z]+:", target)]
    assert links, "no relative links found: the pattern is wrong"
    missing = [target for target in links if not (REPO / target.split("#")[0]).exists()]
    assert missing == []


def test_reference_pages_cover_the_code() -> None:
    hooks = _hooks()
    functions = hooks.functions_page()
    assert all(f"## {name}\n" in functions for name in api.FUNCTIONS)
    settings = hooks.settings_page()
    assert all(f"| `{item.name}` |" in settings for item in fields(Settings))
    cli = hooks.cli_page()
    for command in (
        "sql",
        "status",
        "history",
        "verify",
        "ddl log",
        "ddl bidir",
        "catalog grant",
        "spark-server start",
    ):
        assert f"## snaprepl {command}\n" in cli
    statements = hooks.statements_page()
    for statement in (
        "CREATE SNAPSHOT LOG FOR table_ref",
        "DROP SNAPSHOT table_ref [WITH DELETE]",
        "USING EXISTING TABLE",
    ):
        assert statement in statements


def test_semantics_sections_cited_by_the_code_exist() -> None:
    headings = set(re.findall(r"^## (\d+)\. ", (REPO / "docs" / "semantics.md").read_text(), re.MULTILINE))
    cited: dict[str, set[str]] = {}
    for path in (REPO / "include").rglob("*.py"):
        text = path.read_text()
        assert "SEMANTICS section" not in text, f"{path}: cite docs/semantics.md, which is in the repository"
        for match in re.finditer(r"semantics\.md sections? (\d+)(?: and (\d+))?", text):
            for number in filter(None, match.groups()):
                cited.setdefault(number, set()).add(path.name)
    assert cited, "no citation found: the pattern is wrong"
    assert set(cited) <= headings, {n: sorted(p) for n, p in cited.items() if n not in headings}


def test_docs_pages_the_code_names_exist() -> None:
    named = {
        (match.group(0), path.name)
        for path in (REPO / "include").rglob("*.py")
        for match in re.finditer(r"\bdocs/[\w/.-]+\.md\b", path.read_text())
    }
    assert named, "no docs page named in the code: the pattern is wrong"
    assert [(page, source) for page, source in sorted(named) if not (REPO / page).exists()] == []
