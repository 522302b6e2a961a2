"""Fill a scratch virtual environment's site-packages with exactly what an installed wheel declares.

Run by scripts/wheel_smoke.sh with the development venv's Python, after the wheel itself was installed
into the scratch venv: ``python scripts/wheel_env.py <scratch site-packages> <dist> <extra>...``.
It reads the installed wheel's requirements (with the extras given), resolves them, transitively,
against the distributions of this (the development) environment, checks each version against its
specifier, and symlinks every file of each required distribution (its RECORD) into the scratch
site-packages. Nothing else is there: an import of an undeclared distribution fails, as it would for
a user, and ``pip check`` in the scratch venv then verifies every requirement independently. Linking
takes seconds where installing the same wheels (pyspark's jars, Airflow) takes minutes.
"""

from __future__ import annotations

import sys
from importlib.metadata import Distribution, PackageNotFoundError, PathDistribution, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def _wanted(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras | {""})


def closure(root: Distribution, extras: set[str]) -> dict[str, tuple[Distribution, set[str]]]:
    """Every distribution ``root`` needs (name -> the distribution here, the extras asked of it)."""
    found: dict[str, tuple[Distribution, set[str]]] = {}
    todo = [(r, extras) for r in map(Requirement, root.requires or []) if _wanted(r, extras)]
    while todo:
        requirement, _ = todo.pop()
        name = canonicalize_name(requirement.name)
        have = found.get(name)
        asked = set(requirement.extras)
        if have is not None and asked <= have[1]:
            continue
        try:
            dist = have[0] if have else distribution(requirement.name)
        except PackageNotFoundError:
            sys.exit(f"wheel env: {requirement} is not installed in this environment (requirements.txt)")
        if not requirement.specifier.contains(dist.version, prereleases=True):
            sys.exit(f"wheel env: {dist.metadata['Name']} {dist.version} does not satisfy {requirement}")
        merged = asked | (have[1] if have else set())
        found[name] = (dist, merged)
        for sub in dist.requires or []:
            parsed = Requirement(sub)
            if _wanted(parsed, merged):
                todo.append((parsed, merged))
    return found


def link(dist: Distribution, target: Path) -> int:
    """Symlink the files of ``dist`` (those under its site-packages) into ``target``."""
    assert isinstance(dist, PathDistribution)
    base = Path(str(dist.locate_file("")))
    count = 0
    for entry in dist.files or []:
        if ".." in entry.parts:  # console scripts and data outside site-packages
            continue
        source = base / entry
        if not source.is_file():
            continue
        destination = target / entry
        destination.parent.mkdir(parents=True, exist_ok=True)
        if not destination.exists():
            destination.symlink_to(source)
            count += 1
    return count


def main(site_packages: str, name: str, *extras: str) -> None:
    target = Path(site_packages)
    root = PathDistribution(next(target.glob(f"{name}-*.dist-info")))
    needed = closure(root, set(extras))
    files = sum(link(dist, target) for dist, _ in needed.values())
    print(f"wheel env: {len(needed)} distributions declared by {name}[{','.join(extras)}], {files} files linked")


if __name__ == "__main__":
    main(*sys.argv[1:])
