"""Records: dataclasses whose methods cost no code generation at import.

``@dataclass`` writes each class's ``__init__``, ``__repr__`` and ``__eq__`` (frozen:
also ``__setattr__``, ``__delattr__`` and ``__hash__``) as source text and compiles it
when its module is imported: most of a millisecond a class, on every start of a command.
:func:`record` makes the same class from methods written once, here: still a dataclass
(``dataclasses.fields``, ``replace`` and ``asdict`` work), with the same constructor,
repr, equality, hashing and frozenness. Not supported: ``InitVar``, ``kw_only``,
``order``, ``slots``.

The generic ``__init__`` is slower per call than a generated one: a class that builds
many instances (a message per row) writes its own, and :func:`record` checks that it
takes the fields, in order, with their defaults.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["field", "record"]

C = TypeVar("C", bound=type)


@overload
def record(cls: C, /) -> C: ...
@overload
def record(*, frozen: bool = False) -> Callable[[C], C]: ...


@dataclass_transform(field_specifiers=(field, Field))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """``@record`` / ``@record(frozen=True)``: as ``@dataclass`` / ``@dataclass(frozen=True)``."""

    def wrap(cls: C) -> C:
        return _make(cls, frozen)

    return wrap if cls is None else wrap(cls)


def _make(cls: C, frozen: bool) -> C:
    own = {name for name in ("__init__", "__repr__", "__eq__") if name in cls.__dict__}
    class_hash = cls.__dict__.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    # The fields, as @dataclass finds them; none of its methods are made here.
    dataclass(init=False, repr=False, eq=False)(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = True
    params.frozen = frozen
    all_fields = fields(cls)
    for f in all_fields:
        if f.kw_only is True:
            raise TypeError(f"{cls.__qualname__}.{f.name}: record fields cannot be keyword-only")
    if "__init__" in own:
        _check_init(cls, [f for f in all_fields if f.init])
    else:
        cls.__init__ = _init(cls, all_fields, frozen)  # type: ignore[misc]
    if "__repr__" not in own:
        cls.__repr__ = _repr(tuple(f.name for f in all_fields if f.repr))  # type: ignore[assignment]
    compared = tuple(f.name for f in all_fields if f.compare)
    if "__eq__" not in own:
        cls.__eq__ = _eq(compared)  # type: ignore[assignment]
    if not explicit_hash:
        # @dataclass's rule: equal values hash alike when frozen; mutable ones are unhashable
        hashed = tuple(f.name for f in all_fields if (f.compare if f.hash is None else f.hash))
        cls.__hash__ = _hash(hashed) if frozen else None  # type: ignore[assignment]
    if frozen:
        names = frozenset(f.name for f in all_fields)
        cls.__setattr__, cls.__delattr__ = _frozen(cls, names)  # type: ignore[assignment]
    return cls


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _init(cls: type, all_fields: tuple[Field[Any], ...], frozen: bool) -> Callable[..., None]:
    init_fields = [f for f in all_fields if f.init]
    later = [f for f in all_fields if not f.init and _default(f) is not MISSING]
    names = tuple(f.name for f in init_fields)
    known = frozenset(names)
    where = f"{cls.__qualname__}.__init__()"
    post_init = hasattr(cls, "__post_init__")
    store = object.__setattr__ if frozen else setattr

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(
                f"{where} takes {len(names) + 1} positional arguments but {len(args) + 1} were given"
            )
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{where} got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{where} got multiple values for argument {key!r}")
            values[key] = value
        for f in init_fields:
            value = values[f.name] if f.name in values else _default(f)
            if value is MISSING:
                raise TypeError(f"{where} missing 1 required positional argument: {f.name!r}")
            store(self, f.name, value)
        for f in later:
            store(self, f.name, _default(f))
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _check_init(cls: type, init_fields: list[Field[Any]]) -> None:
    """A hand-written ``__init__`` must take the fields, in order, with their defaults."""
    code = cls.__init__.__code__  # type: ignore[misc]
    params = code.co_varnames[1 : code.co_argcount]
    defaults = cls.__init__.__defaults__ or ()  # type: ignore[misc]
    wanted = tuple(f.name for f in init_fields)
    given = [f.default for f in init_fields if f.default is not MISSING]
    if (params != wanted or code.co_kwonlyargcount or list(defaults) != given
            or any(f.default_factory is not MISSING for f in init_fields)):
        raise TypeError(f"{cls.__qualname__}.__init__ does not take the fields {wanted} with their defaults")


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)
        return NotImplemented

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return __hash__


def _frozen(cls: type, names: frozenset[str]) -> tuple[Callable[..., None], Callable[..., None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__
