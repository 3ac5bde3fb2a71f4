"""A pytest plugin: what rrsite.core's randomizers return during the simulations, on a tape.

The simulations of tests/core (marked slow: tens of thousands of draws from a seeded source,
checked against a design's law) run in full in CPython. Inside Pyodide they run with this
plugin (`-p tests.core.tape`): every `randomize` of a design class of rrsite.core that is given a
seeded source (a `random.Random` that is not a `SystemRandom`) is recorded, the outermost call
only, and after PER_TEST records the test stops (passed). tests/pyodide runs the same in CPython
and compares the tapes: a seeded source gives the same numbers in both interpreters (the same
Mersenne Twister), so equal tapes mean the code the browser runs draws what the simulations
checked. A simulation that never hands a seeded source to a randomizer runs in full. At the end
one line per test: ``tape <node id> <records> <sha256 of their reprs>``.
Standard library and pytest only: this file also runs in Pyodide.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import pkgutil
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

#: Records per test: enough to pass through every branch a simulation takes.
PER_TEST = 300


class Enough(BaseException):
    """PER_TEST records made: the test stops (a BaseException: no test's `except` catches it)."""


class Tape:
    """The records of the running slow test (None between tests)."""

    def __init__(self) -> None:
        self.records: list[str] | None = None
        self.depth = 0
        self.tapes: dict[str, list[str]] = {}

    def wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """`method`, recording its result when a seeded source is among its arguments."""

        @functools.wraps(method)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            seeded = any(isinstance(a, random.Random) and not isinstance(a, random.SystemRandom)
                         for a in (*args, *kwargs.values()))
            if self.records is None or not seeded or self.depth:
                return method(*args, **kwargs)
            self.depth += 1
            try:
                result = method(*args, **kwargs)
            finally:
                self.depth -= 1
            self.records.append(repr(result))
            if len(self.records) >= PER_TEST:
                raise Enough
            return result

        return recorded


def _design_classes() -> Iterator[type]:
    import rrsite.core

    for info in pkgutil.walk_packages(rrsite.core.__path__, "rrsite.core."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == info.name \
                    and callable(vars(value).get("randomize")):
                yield value


TAPE = Tape()


def pytest_configure(config: pytest.Config) -> None:
    for cls in _design_classes():
        cls.randomize = TAPE.wrap(vars(cls)["randomize"])  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("slow") is None:
        return (yield)
    TAPE.records = TAPE.tapes[item.nodeid] = []
    try:
        return (yield)
    except Enough:
        return None
    finally:
        TAPE.records = None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for nodeid, records in TAPE.tapes.items():
        digest = hashlib.sha256("\n".join(records).encode()).hexdigest()
        terminalreporter.write_line(f"tape {nodeid} {len(records)} {digest}")
