"""The hash family of local hashing, and the Hadamard code: integer arithmetic only.

Local hashing (Wang et al. 2017) needs a family of hash functions from the k answers onto g
buckets in which two different answers collide with probability 1/g over the choice of the
function. rrsite uses the linear family over the integers modulo a prime g (Carter & Wegman
1979): an answer v in 0..k-1 is written in base g as digits x_0..x_{d-1} (d the fewest digits that
hold k - 1), and the function numbered ``seed`` is

    h_seed(v) = (b + a_0 x_0 + ... + a_{d-1} x_{d-1}) mod g,

where the base-g digits of ``seed`` (least significant first) are a_0..a_{d-1}, then b; the seed
ranges over 0..g^(d+1) - 1. For two different answers some digit differs, and since g is prime
exactly one value of that digit's a makes them collide: P(h(v) = h(v')) = 1/g exactly, and h(v)
is uniform. Everything is whole numbers, so the browser (Pyodide) and the analyzer compute the
same bucket bit for bit; tests/core pins test vectors.

The Hadamard code (Acharya, Sun & Zhang 2019): with K the smallest power of two above k, answer v
owns row v + 1 of the K x K Sylvester-Hadamard matrix, whose entry in column j is
(-1)^popcount((v + 1) & j).
"""

from __future__ import annotations

from ..errors import DesignError


def is_prime(n: int) -> bool:
    """Whether the whole number n is prime (trial division: n is at most a few thousand here)."""
    if n < 2:
        return False
    divisor = 2
    while divisor * divisor <= n:
        if n % divisor == 0:
            return False
        divisor += 1
    return True


def digits_for(k: int, g: int) -> int:
    """The fewest base-g digits that write every answer 0..k-1 (at least one)."""
    d, reach = 1, g
    while reach < k:
        d += 1
        reach *= g
    return d


def seed_count(k: int, g: int) -> int:
    """How many hash functions the family has for k answers and g buckets: g^(d+1)."""
    return int(g ** (digits_for(k, g) + 1))


def bucket(seed: int, answer: int, k: int, g: int) -> int:
    """h_seed(answer) of the linear family: ``(b + sum a_i x_i) mod g`` (module docstring)."""
    if not is_prime(g):
        raise DesignError(f"g must be a prime number of buckets, got {g!r}")
    if not 0 <= answer < k:
        raise DesignError(f"answer must be in 0..{k - 1}, got {answer!r}")
    d = digits_for(k, g)
    if not 0 <= seed < g ** (d + 1):
        raise DesignError(f"seed must be in 0..{g ** (d + 1) - 1}, got {seed!r}")
    total = 0
    for _ in range(d):
        seed, a = divmod(seed, g)
        answer, x = divmod(answer, g)
        total += a * x
    return (total + seed) % g  # what is left of the seed is b


def hadamard_size(k: int) -> int:
    """K: the smallest power of two above k (row 0, all ones, is no answer's)."""
    size = 1
    while size <= k:
        size *= 2
    return size


def hadamard_plus(answer: int, column: int) -> bool:
    """Whether row ``answer + 1`` of the Sylvester-Hadamard matrix is +1 in ``column``."""
    return bin((answer + 1) & column).count("1") % 2 == 0
