"""The smallest sample size whose simulated power reaches a target (bisection).

Shared by `rrsite power` and `rrsite power --predictor`.
"""

from __future__ import annotations

from collections.abc import Callable


def smallest_n(power_at: Callable[[int], float], low: int, high: int, power: float,
               steps: int = 7) -> tuple[int, float]:
    """(N, power at N): bisection over [low, high] for the smallest N with power_at(N) >= power.

    ``high`` is taken as reaching the target (its power is returned even when it does not);
    at most ``steps`` halvings, stopping once the bracket is within 1% of ``high`` (or 2).
    """
    at_high = power_at(high)
    for _ in range(steps):
        if high - low <= max(2, high // 100):
            break
        middle = (low + high) // 2
        value = power_at(middle)
        if value >= power:
            high, at_high = middle, value
        else:
            low = middle
    return high, at_high
