"""The command lines of snaprepl's Spark jobs, derived from each job's request object (a frozen
dataclass: :class:`snaprepl.refresh.model.RefreshRequest`, :class:`snaprepl.publications.request.SyncRequest`,
:class:`snaprepl.verify.model.VerifyRequest`): the submitter calls :func:`job_argv`, the job's ``main``
calls :func:`parse_job_argv`, so the two cannot drift apart. Names and numbers only (credentials travel
in the connections file). Imports nothing heavy: both sides of spark-submit load it.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar


class Request(Protocol):
    """A job's request: a dataclass whose fields are str, int or bool (each may be optional)."""

    __dataclass_fields__: typing.ClassVar[dict[str, dataclasses.Field[Any]]]


RequestT = TypeVar("RequestT", bound=Request)

#: The catalog's connection id, which every job gets besides its request's fields.
CATALOG_CONN_OPTION = "--catalog-conn"


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def job_argv(request: Request, catalog_conn: str) -> list[str]:
    """``request``'s command line: ``--field value`` per field (a true boolean as a bare flag; a false one
    or a None value left out), then the catalog's connection id."""
    argv: list[str] = []
    for item in dataclasses.fields(request):
        value = getattr(request, item.name)
        if value is None or value is False:
            continue
        argv += [_option(item.name)] if value is True else [_option(item.name), str(value)]
    return [*argv, CATALOG_CONN_OPTION, catalog_conn]


def parse_job_argv(
    request_type: type[RequestT], argv: Sequence[str] | None, *, prog: str, description: str
) -> tuple[RequestT, str]:
    """The request and the catalog's connection id :func:`job_argv` wrote into ``argv``. An option left
    out keeps its field's default (a run id made afresh, say)."""
    parser = argparse.ArgumentParser(prog=prog, description=description, argument_default=argparse.SUPPRESS)
    hints = typing.get_type_hints(request_type)
    for item in dataclasses.fields(request_type):
        kind = _plain(hints[item.name])
        required = item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        if kind is bool:
            if item.default is not False:
                raise TypeError(f"{request_type.__name__}.{item.name}: a boolean option must default to False")
            parser.add_argument(_option(item.name), dest=item.name, action="store_true")
        else:
            parser.add_argument(_option(item.name), dest=item.name, type=kind, required=required)
    parser.add_argument(CATALOG_CONN_OPTION, dest="catalog_conn", required=True)
    values = vars(parser.parse_args(argv))
    catalog_conn = values.pop("catalog_conn")
    return request_type(**values), catalog_conn


def _plain(hint: Any) -> type[Any]:
    """``int`` for ``int`` and ``int | None`` alike."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        [hint] = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if hint not in (str, int, bool):
        raise TypeError(f"a job request's field must be str, int or bool, not {hint!r}")
    return typing.cast(type[Any], hint)
