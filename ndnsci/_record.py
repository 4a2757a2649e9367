"""A base for the fetch path's mutable records: a dataclass's repr and equality, without
importing :mod:`dataclasses` (which imports :mod:`inspect`: ~9 ms of a ``ndnsci fetch``'s
start-up, DEVELOPERS.md "Start-up budget").

The fetch path's immutable records are ``typing.NamedTuple``; those a transfer fills in as it
goes (:class:`ndnsci.Outcome`, :class:`ndnsci.transports.Received`, the consumer's ``Target``)
are plain classes with an ``__init__`` of their own and this base. A bottom module: it imports
nothing.
"""

from __future__ import annotations


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
