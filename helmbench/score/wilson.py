"""Wilson score interval for a proportion.

Why Wilson and not the textbook p ± z·√(p(1−p)/n): behaviours are often near 0 % or 100 %
and have few cases, exactly where the textbook interval collapses to zero width or leaves
[0, 1]; Wilson stays inside [0, 1] and keeps close to its nominal coverage for small n.
"""

from __future__ import annotations

import math

Z95 = 1.959964  # two-sided 95 % normal quantile


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """(low, high) Wilson interval for `successes` out of `n`; None when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # At 0 and n the bound is exactly 0 or 1; say so rather than 1e-17 or 0.9999999999999999.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high
