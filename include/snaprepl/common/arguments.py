"""Checking the arguments of the Python API and of the statements' function forms before anything runs.

Every ``repl_*`` function is wrapped by :func:`checked`: its positional arguments are bound to its
signature and each is checked against its type hint, so a wrong count or kind of argument is one
:class:`~snaprepl.errors.InvalidArgument` line naming the function and the argument, raised before
any catalog or database is touched. A flag (:data:`Flag`) is parsed by :func:`parse_flag`, strictly:
``'0'`` or ``'no'`` never counts as true.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from snaprepl.errors import InvalidArgument

#: A yes/no argument: ``0``, ``1``, ``'0'``, ``'1'``, ``true``, ``false`` (strings case-insensitive).
Flag = Annotated[bool | int | str, "flag"]

_TRUE = {"1", "true"}
_FALSE = {"0", "false"}
F = TypeVar("F", bound=Callable[..., Any])


def parse_flag(value: object, name: str = "flag") -> bool:
    """``value`` as a flag; anything but 0, 1, '0', '1', true, false (any case) is refused.

    :raises InvalidArgument: naming ``name`` and the value given.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise InvalidArgument(
        f"{name} must be 0, 1, true or false, got {describe(value)}", "a flag takes only 0, 1, true or false"
    )


def describe(value: object) -> str:
    """A short one-line description of a value for messages: its kind and a cut repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    kinds = {str: "", type(None): ""}
    kind = kinds.get(type(value), f"{type(value).__name__} ")
    return f"{kind}{text}"


def _is_flag(hint: Any) -> bool:
    return typing.get_origin(hint) is Annotated and "flag" in getattr(hint, "__metadata__", ())


def _members(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _expected(hint: Any) -> str:
    words = {str: "a string", int: "an integer", type(None): "NULL", float: "a number"}
    return " or ".join(words.get(m, getattr(m, "__name__", str(m))) for m in _members(hint))


def fits(value: object, hint: Any) -> bool:
    """Whether ``value`` is of the kind ``hint`` asks for (``Any`` and unknown hints take anything)."""
    if hint is Any or _is_flag(hint):
        return True
    for member in _members(hint):
        if member is Any:
            return True
        if member is type(None) and value is None:
            return True
        if member is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if member in (str, float) and isinstance(value, member) and not isinstance(value, bool):
            return True
        if member not in (str, int, float, type(None)):
            return True  # a hint this module does not check
    return False


def returns_fit(returned: Any, hint: Any) -> bool:
    """Whether a function declared to return ``returned`` can feed a parameter hinted ``hint``."""
    if hint is Any or returned is Any:
        return hint is Any
    wanted = set(_members(hint))
    return all(
        m in wanted or (isinstance(m, type) and any(isinstance(w, type) and issubclass(m, w) for w in wanted))
        for m in _members(returned)
    )


@functools.cache
def hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The resolved type hints of ``function`` (Annotated kept)."""
    return typing.get_type_hints(function, include_extras=True)


def positional(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters a statement's function form can pass (the keyword-only ones carry context)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in inspect.signature(function).parameters.values() if p.kind in kinds]


def usage(function: Callable[..., Any], name: str | None = None) -> str:
    """``name(a, b, [c])``: the function's positional parameters, optional ones in brackets."""
    params = positional(function)
    shown = ", ".join(p.name if p.default is inspect.Parameter.empty else f"[{p.name}]" for p in params)
    return f"{name or function.__name__}({shown})"


def check_count(function: Callable[..., Any], count: int, name: str | None = None) -> None:
    """Refuse a call of ``function`` with ``count`` positional arguments if it takes another number."""
    params = positional(function)
    required = [p for p in params if p.default is inspect.Parameter.empty]
    if not len(required) <= count <= len(params):
        raise InvalidArgument(f"{usage(function, name)} got {count} argument(s)", "see `snaprepl sql --help`")


def check_value(function: Callable[..., Any], param: str, value: object, name: str | None = None) -> object:
    """``value`` checked (and a flag parsed) for parameter ``param`` of ``function``."""
    hint = hints(function).get(param, Any)
    label = f"{name or function.__name__}: argument {param}"
    if _is_flag(hint):
        return parse_flag(value, label)
    if not fits(value, hint):
        raise InvalidArgument(f"{label} must be {_expected(hint)}, got {describe(value)}", "see `snaprepl sql --help`")
    return value


def checked(function: F) -> F:
    """Wrap an API function so its arguments are counted and checked before it runs."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            raise InvalidArgument(
                f"{usage(function)} got {len(args)} positional and {len(kwargs)} keyword argument(s)",
                "see help(snaprepl.api)",
            ) from None
        for param in positional(function):
            if param.name in bound.arguments:
                bound.arguments[param.name] = check_value(function, param.name, bound.arguments[param.name])
        return function(*bound.args, **bound.kwargs)

    return typing.cast(F, wrapper)
