"""rrsite: randomized-response surveys as static sites."""

__version__ = "0.1.0"
