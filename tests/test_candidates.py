"""Which regions the fast makers propose as cards: drawn shapes for exact answers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.find.candidates import MAX_ASPECT, find_candidates, make_maps
from setvision.vision.find.fit import CARD_RATIO
from setvision.vision.geometry import convex_iou

TABLE = (40, 45, 50)  # BGR: dark wood
PAPER = (235, 240, 240)
ACROSS = 300  # the drawn card's long side, across the view (work pixels)


def _seen_from(elevation_degrees: float) -> tuple[np.ndarray, np.ndarray]:
    """A blank card lying on the table across the view of a camera this many degrees above the
    table: its short side, pointing away, shrinks by the sine of that angle and its far side
    by a little more (perspective). The image and the card's corners."""
    length = ACROSS / CARD_RATIO * np.sin(np.radians(elevation_degrees))
    near, far = ACROSS / 2, 0.85 * ACROSS / 2
    cx, cy = 320, 240
    corners = np.float64([[cx - far, cy - length / 2], [cx + far, cy - length / 2],
                          [cx + near, cy + length / 2], [cx - near, cy + length / 2]])  # fmt: skip
    return _on_table(corners), corners


def _on_table(corners: np.ndarray) -> np.ndarray:
    """Blank paper of this outline on a dark table."""
    image = np.full((480, 640, 3), TABLE, np.uint8)
    cv2.fillConvexPoly(image, np.round(corners).astype(np.int32), PAPER)
    return image


def _best_match(image: np.ndarray, corners: np.ndarray) -> float:
    candidates = find_candidates(make_maps(image))
    return max((convex_iou(corners, c.quad.astype(np.float64)) for c in candidates), default=0.0)


@pytest.mark.parametrize("elevation", [90, 60, 30])
def test_a_card_seen_from_above_or_low_over_the_table_is_proposed(elevation):
    # a card across the table is 1.56 / sin(elevation) times longer than wide: about 3.1 at
    # 30 degrees, as the far cards of a seated player's phone photo are
    image, corners = _seen_from(elevation)
    assert _best_match(image, corners) > 0.9


def test_a_strip_too_long_for_a_card_at_any_useful_angle_is_not_proposed():
    # a ruler, a cable or the edge of a sheet: longer than MAX_ASPECT times its width
    height = ACROSS / (MAX_ASPECT + 1)
    corners = np.float64([[170, 240], [470, 240], [470, 240 + height], [170, 240 + height]])
    assert _best_match(_on_table(corners), corners) < 0.5
