"""Number cards in reading order: rows top to bottom, then left to right."""

from __future__ import annotations

import numpy as np


def layout_angle(corners: list[np.ndarray]) -> float:
    """The layout's tilt in radians (within +-45 degrees), from the directions of card edges."""
    vectors = []
    for quad in corners:
        edges = np.roll(quad, -1, axis=0) - quad
        angles = np.arctan2(edges[:, 1], edges[:, 0])
        lengths = np.linalg.norm(edges, axis=1)
        vectors.append(np.stack([lengths * np.cos(4 * angles), lengths * np.sin(4 * angles)], 1))
    total = np.concatenate(vectors).sum(axis=0)
    return float(np.arctan2(total[1], total[0]) / 4) if np.hypot(*total) > 0 else 0.0


def reading_order(corners: list[np.ndarray]) -> list[int]:
    """Indices of the quads in reading order, robust to a tilted camera and uneven rows."""
    if not corners:
        return []
    angle = layout_angle(corners)
    rotation = np.array([[np.cos(-angle), -np.sin(-angle)], [np.sin(-angle), np.cos(-angle)]])
    turned = [np.asarray(q, dtype=np.float64) @ rotation.T for q in corners]
    centres = np.array([q.mean(axis=0) for q in turned])
    heights = np.array([q[:, 1].max() - q[:, 1].min() for q in turned])
    tolerance = 0.5 * float(np.median(heights))
    rows: list[list[int]] = []
    for index in np.argsort(centres[:, 1], kind="stable"):
        if rows and abs(centres[index, 1] - np.mean(centres[rows[-1], 1])) <= tolerance:
            rows[-1].append(int(index))
        else:
            rows.append([int(index)])
    return [i for row in rows for i in sorted(row, key=lambda i: centres[i, 0])]
