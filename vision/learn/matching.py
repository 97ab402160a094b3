"""Pair detected cards with labelled ones: by position where labels have one, else by identity."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from setvision.solver import ATTRIBUTES, Card
from setvision.vision.geometry import contains_point


def match_by_position(
    quads: list[np.ndarray], centres: list[tuple[float, float]]
) -> list[tuple[int, int]]:
    """(label index, detection index) pairs: the label's centre lies inside the detection.

    When a centre lies in several detections (or a detection holds several centres), the
    pairing that keeps centres closest to detection centres wins.
    """
    if not quads or not centres:
        return []
    cost = np.full((len(centres), len(quads)), 1e9)
    for i, centre in enumerate(centres):
        for j, quad in enumerate(quads):
            if contains_point(quad, centre):
                cost[i, j] = float(np.linalg.norm(np.asarray(quad).mean(axis=0) - centre))
    rows, columns = linear_sum_assignment(cost)
    return [(int(i), int(j)) for i, j in zip(rows, columns) if cost[i, j] < 1e9]


def match_by_identity(predicted: list[Card], labelled: list[Card]) -> list[tuple[int, int]]:
    """(label index, prediction index) pairs agreeing on the most attributes (each card unique)."""
    if not predicted or not labelled:
        return []
    agreement = np.array(
        [[sum(p.value(a) == t.value(a) for a in ATTRIBUTES) for p in predicted] for t in labelled]
    )
    rows, columns = linear_sum_assignment(-agreement)
    return [(int(i), int(j)) for i, j in zip(rows, columns)]
