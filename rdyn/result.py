"""Result objects of the Python API: attributes named as the JSON keys of the subcommand.

``r.t1``, ``r.final.C1``, ``r.stability.eta_limit``: values as computed (float64 numbers, or,
with ``dps``, :class:`rdyn.real.Real`: an mpmath ``mpf`` that prints at the run's ``dps``
significant digits, with ``float()`` and every mpmath function working; nested JSON objects are again
:class:`Result`; keys that are not identifiers, such as the step numbers of ``record``, are
reached with ``r.record["100"]``). ``r.to_dict()`` is exactly the object the CLI prints with
``--json`` (same keys, same digits: reals as numbers, or strings of ``dps`` digits, non-finite
values as None).
"""
from __future__ import annotations

import json
from typing import Any, Iterator


class Result:
    """Read-only view of one subcommand's result (see the module docstring)."""

    __slots__ = ("_data", "_dps", "_detail")

    def __init__(self, data: dict, dps: int | None = None, detail: Any = None):
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_dps", dps)
        object.__setattr__(self, "_detail", detail)

    def _wrap(self, value):
        if isinstance(value, dict):
            return Result(value, self._dps)
        if self._dps is None:
            return value
        from rdyn.real import at_precision

        if isinstance(value, list):
            return [at_precision(v, self._dps) for v in value]
        return at_precision(value, self._dps)

    def __getattr__(self, name: str):
        try:
            return self._wrap(self._data[name])
        except KeyError:
            raise AttributeError(f"result has no key {name!r} (keys: {', '.join(map(str, self._data))})") from None

    def __getitem__(self, key):
        return self._wrap(self._data[str(key)] if str(key) in self._data else self._data[key])

    def __setattr__(self, name, value):
        raise AttributeError("results are read-only")

    def __contains__(self, key) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def keys(self):
        return self._data.keys()

    def __dir__(self):
        return sorted(set(list(self._data) + ["to_dict", "keys", "detail"]))

    @property
    def detail(self) -> Any:
        """The library object behind the result (e.g. the iterator's RunResult), or None."""
        return self._detail

    def to_dict(self) -> dict:
        """The ``--json`` object of the CLI (a fresh dict of JSON-ready values)."""
        from rdyn.output import jsonable

        return jsonable(self._data, self._dps)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    def __eq__(self, other) -> bool:
        return isinstance(other, Result) and self._data == other._data and self._dps == other._dps

    __hash__ = None

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self._data.items())[:6]
                          if not isinstance(v, (dict, list)))
        return f"Result({shown}{', ...' if len(self._data) > 6 else ''})"
