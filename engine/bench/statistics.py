"""Summary statistics of timing samples: median, p95 and the ratio against a baseline.

Owns: the arithmetic of the report, as pure functions with hand-checked doctests. Must
not touch: timing, I/O, backends.

Definitions (stated so that anyone can recompute a report by hand):
* **median**: the middle sample of the sorted samples; the mean of the two middle ones
  when the count is even (`statistics.median`);
* **p95**: the nearest-rank percentile: the sample at 1-based rank `ceil(0.95 * n)` of
  the sorted samples. With fewer than 20 samples it is the maximum. No interpolation,
  so the value is always a sample that was really observed;
* **ratio**: `median(backend) / median(baseline)` from the same run (>1 is slower than
  the baseline); undefined (None) without a baseline or when the baseline median is 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def median(samples: Sequence[float]) -> float:
    """The median of non-empty `samples`.

    >>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 3.0, 2.0])
    (2.0, 2.5)
    """
    if not samples:
        raise ValueError("median of no samples")
    return float(statistics.median(samples))


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the sample at rank `ceil(fraction * n)` (1-based).

    >>> percentile([5.0, 1.0, 4.0, 2.0, 3.0], 0.5)
    3.0
    >>> percentile([float(value) for value in range(1, 101)], 0.95)
    95.0
    >>> percentile([float(value) for value in range(1, 11)], 0.95)
    10.0
    """
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], not {fraction}")
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered) - 1e-9))
    return float(ordered[rank - 1])


def p95(samples: Sequence[float]) -> float:
    """The 95th nearest-rank percentile.

    >>> p95([float(value) for value in range(1, 41)])
    38.0
    """
    return percentile(samples, 0.95)


def ratio(value: float, baseline: float | None) -> float | None:
    """`value / baseline`, or None when there is no usable baseline.

    >>> ratio(3.0, 2.0), ratio(1.0, None), ratio(1.0, 0.0)
    (1.5, None, None)
    """
    if baseline is None or baseline <= 0.0:
        return None
    return value / baseline


@dataclass(frozen=True, slots=True)
class Summary:
    """The statistics of one (workload, backend) cell, in seconds."""

    count: int
    median: float
    p95: float
    minimum: float
    maximum: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Summary:
        """Summarise non-empty `samples`.

        >>> Summary.of([0.3, 0.1, 0.2])
        Summary(count=3, median=0.2, p95=0.3, minimum=0.1, maximum=0.3)
        """
        return cls(len(samples), median(samples), p95(samples), min(samples), max(samples))
