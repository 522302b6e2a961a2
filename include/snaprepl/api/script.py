"""Running parsed statements (``snaprepl sql``, ``snaprepl.run_script``): each one is a call of the Python API."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

from snaprepl import api
from snaprepl.catalog.store import Catalog
from snaprepl.common.arguments import check_count, check_value, hints, positional, returns_fit
from snaprepl.errors import InvalidArgument, SnapreplError, UnknownFunction
from snaprepl.ops import group_refresh, groups, snapshot_logs, snapshot_upkeep, snapshots, verify
from snaprepl.settings import Settings
from snaprepl.statements import ast
from snaprepl.statements.parser import parse_script
from snaprepl.submit.refresh import submit_refresh
from snaprepl.submit.sync import Syncer


@dataclass(frozen=True)
class Context:
    catalog: Catalog
    settings: Settings
    refresher: snapshots.Refresher = submit_refresh
    syncer: Syncer | None = None
    verifier: verify.Verifier | None = None


@singledispatch
def execute(statement: ast.Statement, ctx: Context) -> Any:
    raise NotImplementedError(type(statement).__name__)  # every parsed statement has a case below


@execute.register
def _(statement: ast.CreateSnapshotLog, ctx: Context) -> Any:
    return snapshot_logs.create_snapshot_log(statement.source, catalog=ctx.catalog)


@execute.register
def _(statement: ast.DropSnapshotLog, ctx: Context) -> Any:
    return snapshot_logs.drop_snapshot_log(statement.source, catalog=ctx.catalog)


@execute.register
def _(statement: ast.PurgeSnapshotLog, ctx: Context) -> Any:
    return snapshot_logs.purge_snapshot_log(
        statement.source, catalog=ctx.catalog, settings=ctx.settings, force=statement.force
    )


@execute.register
def _(statement: ast.CreateNonincrementalSnapshot, ctx: Context) -> Any:
    return snapshots.create_nonincremental_snapshot(
        statement.dest,
        statement.query,
        statement.schedule.value if statement.schedule else None,
        catalog=ctx.catalog,
        settings=ctx.settings,
        refresher=ctx.refresher,
        use_existing=statement.use_existing,
    )


@execute.register
def _(statement: ast.CreateIncrementalSnapshot, ctx: Context) -> Any:
    return snapshots.create_incremental_snapshot(
        statement.dest,
        statement.source,
        statement.columns,
        statement.condition,
        statement.schedule.value if statement.schedule else None,
        catalog=ctx.catalog,
        settings=ctx.settings,
        refresher=ctx.refresher,
        use_existing=statement.use_existing,
    )


@execute.register
def _(statement: ast.UpdateSnapshot, ctx: Context) -> Any:
    return snapshots.update_snapshot(
        statement.name,
        nonincremental=statement.nonincremental,
        catalog=ctx.catalog,
        settings=ctx.settings,
        refresher=ctx.refresher,
    )


@execute.register
def _(statement: ast.DropSnapshot, ctx: Context) -> Any:
    return snapshot_upkeep.drop_snapshot(statement.name, with_delete=statement.with_delete, catalog=ctx.catalog)


@execute.register
def _(statement: ast.AlterSnapshot, ctx: Context) -> Any:
    return snapshot_upkeep.set_schedule(statement.name, statement.schedule.value, catalog=ctx.catalog)


@execute.register
def _(statement: ast.VerifySnapshot, ctx: Context) -> Any:
    return verify.verify_snapshot(
        statement.name, repair=statement.repair, where=statement.condition, catalog=ctx.catalog,
        settings=ctx.settings, **({"verifier": ctx.verifier} if ctx.verifier else {}),
    )  # fmt: skip


@execute.register
def _(statement: ast.CreateSnapshotGroup, ctx: Context) -> Any:
    return groups.create_group(
        statement.name, statement.source, statement.into, statement.exclude, statement.include_new,
        statement.schedule.value if statement.schedule else None, catalog=ctx.catalog, settings=ctx.settings,
        refresher=ctx.refresher,
    )  # fmt: skip


@execute.register
def _(statement: ast.UpdateSnapshotGroup, ctx: Context) -> Any:
    return group_refresh.update_group(
        statement.name, nonincremental=statement.nonincremental, catalog=ctx.catalog, settings=ctx.settings,
        refresher=ctx.refresher,
    )  # fmt: skip


@execute.register
def _(statement: ast.AlterSnapshotGroup, ctx: Context) -> Any:
    if statement.member is None:
        schedule = statement.schedule.value if statement.schedule else None
        return groups.set_group_schedule(statement.name, schedule, catalog=ctx.catalog)
    return groups.alter_group(statement.name, statement.member, add=statement.add, catalog=ctx.catalog)


@execute.register
def _(statement: ast.DropSnapshotGroup, ctx: Context) -> Any:
    return groups.drop_group(statement.name, catalog=ctx.catalog)


@execute.register
def _(statement: ast.Call, ctx: Context) -> Any:
    _check_call(statement)  # the whole call, inner calls included, before any of them runs
    return _run_call(statement, ctx)


def _run_call(call: ast.Call, ctx: Context) -> Any:
    function = _function(call.function)
    args = [_run_call(a, ctx) if isinstance(a, ast.Call) else a for a in call.args]
    accepted = inspect.signature(function).parameters
    context = {"catalog": ctx.catalog, "settings": ctx.settings, "refresher": ctx.refresher, "syncer": ctx.syncer}
    if ctx.verifier is not None:
        context["verifier"] = ctx.verifier
    kwargs = {k: v for k, v in context.items() if k in accepted}
    return function(*args, **kwargs)


def _function(name: str) -> Callable[..., Any]:
    function = api.FUNCTIONS.get(name.lower())
    if function is None:
        close = difflib.get_close_matches(name.lower(), api.FUNCTIONS, n=1)
        hint = f"did you mean {close[0]}?" if close else f"known functions: {', '.join(sorted(api.FUNCTIONS))}"
        raise UnknownFunction(f"unknown function {name}", hint)
    return function


def _check_call(call: ast.Call) -> Callable[..., Any]:
    """Refuse a call whose function, argument count or argument kinds are wrong, at any depth."""
    function = _function(call.function)
    check_count(function, len(call.args), call.function)
    for arg, param in zip(call.args, positional(function), strict=False):
        if isinstance(arg, ast.Call):
            returned = hints(_check_call(arg)).get("return", Any)
            if not returns_fit(returned, hints(function).get(param.name, Any)):
                raise InvalidArgument(
                    f"{call.function}: argument {param.name} cannot be the result of {arg.function}()",
                    "pass a value",
                )
        else:
            check_value(function, param.name, arg, call.function)
    return function


def run_script(
    text: str,
    *,
    catalog: Catalog | None = None,
    settings: Settings | None = None,
    refresher: snapshots.Refresher | None = None,
    syncer: Syncer | None = None,
    verifier: verify.Verifier | None = None,
) -> list[Any]:
    """Parse and run ``;``-separated statements in order; stop at the first failure.

    :return: one result per statement.
    :raises SnapreplError: from the failing statement, saying which one it was when there are several.
    """
    statements = parse_script(text)
    settings = settings or Settings.load()  # loaded once, for the catalog and every statement
    ctx = Context(
        catalog if catalog is not None else Catalog.open(settings),
        settings,
        refresher or submit_refresh,
        syncer,
        verifier,
    )
    results = []
    for number, statement in enumerate(statements, start=1):
        try:
            results.append(execute(statement, ctx))
        except SnapreplError as err:
            if len(statements) > 1:
                done = f"; statements 1-{number - 1} were done" if number > 1 else ""
                err.message = f"statement {number}: {err.message}"
                err.args = (f"{err.message}; {err.hint}{done}" if err.hint else f"{err.message}{done}",)
            raise
    return results
