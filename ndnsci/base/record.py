"""Bases for the fetch path's records without :mod:`typing` or :mod:`dataclasses` at run time
(DEVELOPERS.md "Start-up budget"): ``dataclasses`` imports :mod:`inspect` (~9 ms of a ``ndnsci
fetch``'s start-up), ``typing`` imports :mod:`re` and :mod:`enum` (~20 M instructions together)
and ``typing.NamedTuple`` evaluates each field's annotation (~0.85 M instructions a class of
four fields).

- :class:`Fields`, the immutable records (``ManifestEntry``, ``FetchOptions``, ``Job``,
  ``Settings``, the TLV and RDR types, ``PublisherKey``): to the type checker a
  ``typing.NamedTuple``, at run time a tuple subclass that behaves as one (``_fields``,
  ``_field_defaults``, ``_make``, ``_replace``, ``_asdict``, ``__match_args__``, its ``repr``,
  tuple equality, hash, unpacking and pickling), built from the class's annotations, which
  ``from __future__ import annotations`` leaves as strings, never evaluated. Declared as a
  NamedTuple is::

      from ndnsci.base.record import TYPE_CHECKING

      if TYPE_CHECKING:
          from typing import NamedTuple as Fields
      else:
          from ndnsci.base.record import Fields

      class Segment(Fields):
          number: int
          data: bytes = b""

  (no inheritance from a record class: a subclass adds no fields, as a NamedTuple's.)
- :class:`Protocol`, the public contracts (``ndnsci.sdk.transports.Transport``,
  ``ndnsci.Progress``): to the type checker a ``typing.Protocol``, at run time a plain base
  class (a transport may
  subclass it; it cannot be instantiated itself; ``isinstance`` is nominal, where typing's
  refuses a protocol that is not ``runtime_checkable``).
- :class:`Record`, the mutable ones a transfer fills in as it goes (:class:`ndnsci.Outcome`,
  :class:`ndnsci.sdk.transports.Received`, the consumer's ``Target``): plain classes with an
  ``__init__`` of their own and a dataclass's ``repr`` and ``==``.

A bottom module: it imports nothing but the interpreter's built-in ``_collections``.
"""

from __future__ import annotations

try:  # the C descriptor collections.namedtuple's fields are
    from _collections import _tuplegetter  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another interpreter
    from operator import itemgetter as _itemgetter

    def _tuplegetter(index: int, doc: str) -> property:
        return property(_itemgetter(index), doc=doc)


# ``typing.TYPE_CHECKING`` without importing typing: the type checkers treat any name
# TYPE_CHECKING as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_tuple_new = tuple.__new__


class _FieldsType(type):
    """Makes a :class:`Fields` subclass's annotated names its fields (in order, the defaults
    those with a value), each read from the tuple by the C descriptor namedtuple uses, and
    gives it a ``__new__`` taking them by position or keyword, as a NamedTuple's."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
        if bases == (tuple,) or Fields not in bases:
            # Fields itself, or a record's subclass: no fields of its own, and a __dict__ unless
            # it declares __slots__, as a NamedTuple's subclass
            return super().__new__(mcls, name, bases, ns)
        annotations: dict[str, str] = ns.get("__annotations__", {})  # type: ignore[assignment]
        fields = tuple(annotations)
        defaults: dict[str, object] = {}
        for index, field in enumerate(fields):
            if field.startswith("_"):
                raise ValueError(f"Field names cannot start with an underscore: {field!r}")
            if field in ns:
                defaults[field] = ns[field]
            elif defaults:
                raise TypeError(
                    f"Non-default namedtuple field {field} cannot follow default field"
                    f"{'s' if len(defaults) > 1 else ''} {', '.join(defaults)}"
                )
            ns[field] = _tuplegetter(index, f"Alias for field number {index}")
        ns["__slots__"] = ()
        ns["_fields"] = fields
        ns["_field_defaults"] = defaults
        ns["__match_args__"] = fields
        ns["__new__"] = _constructor(name, fields, defaults)
        return super().__new__(mcls, name, bases, ns)


def _constructor(name: str, fields: tuple[str, ...], defaults: dict[str, object]) -> object:
    count = len(fields)
    required = count - len(defaults)
    tail = tuple(defaults.values())

    def __new__(cls: type, *args: object, **kwargs: object) -> object:
        if not kwargs and len(args) == count:
            return _tuple_new(cls, args)
        if not kwargs and required <= len(args) < count:
            return _tuple_new(cls, args + tail[len(args) - required :])
        if len(args) > count:
            raise TypeError(
                f"{name}.__new__() takes {count + 1} positional arguments but"
                f" {len(args) + 1} were given"
            )
        values = list(args)
        for field in fields[len(args) :]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in defaults:
                values.append(defaults[field])
            else:
                missing = [
                    f for f in fields[len(values) :] if f not in kwargs and f not in defaults
                ]
                raise TypeError(f"{name}.__new__() missing required argument(s): {missing}")
        if kwargs:
            key = next(iter(kwargs))
            if key in fields:
                raise TypeError(f"{name}.__new__() got multiple values for argument {key!r}")
            raise TypeError(f"{name}.__new__() got an unexpected keyword argument {key!r}")
        return _tuple_new(cls, values)

    __new__.__qualname__ = f"{name}.__new__"
    return staticmethod(__new__)


class Fields(tuple, metaclass=_FieldsType):  # type: ignore[type-arg]
    """A ``typing.NamedTuple`` built at run time without typing (see the module)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, object] = {}  # noqa: RUF012 - each class sets its own

    @classmethod
    def _make(cls, iterable: Iterable[object]) -> Fields:
        result = _tuple_new(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _replace(self, **kwargs: object) -> Fields:
        result = self._make(map(kwargs.pop, self._fields, self))
        if kwargs:
            raise ValueError(f"Got unexpected field names: {list(kwargs)!r}")
        return result

    def _asdict(self) -> dict[str, object]:
        return dict(zip(self._fields, self, strict=True))

    def __repr__(self) -> str:
        pairs = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)
        )
        return f"{type(self).__name__}({pairs})"

    def __getnewargs__(self) -> tuple[object, ...]:
        return tuple(self)


class Protocol:
    """``typing.Protocol`` at run time, without typing: a base for contracts that are declared
    ``if TYPE_CHECKING: from typing import Protocol`` (the type checker sees the real one)."""

    __slots__ = ()

    def __new__(cls, *args: object, **kwargs: object) -> Protocol:
        if Protocol in cls.__bases__:
            raise TypeError(f"{cls.__name__} is a protocol: it cannot be instantiated")
        return super().__new__(cls)


class Record:
    """``repr`` and ``==`` from the instance's attributes, as a dataclass has them (unhashable,
    as a mutable dataclass is)."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable: no hash, as an eq=True dataclass
