"""Warp a card's outline to an upright, landscape canonical image of fixed size."""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.geometry import long_side_first, side_lengths

#: Canonical card size (width, height): landscape, the SET card's 3.5 x 2.25 proportions.
CARD_SIZE = (150, 97)


def rectify(
    image: np.ndarray,
    corners_xy: np.ndarray,
    size: tuple[int, int] = CARD_SIZE,
    long_side: bool = True,
) -> np.ndarray:
    """The card inside ``corners_xy`` of ``image`` as a (height, width, 3) landscape image.

    The long side of the card is laid horizontally; a card and its 180-degree turn give
    images that read the same, which is all the attributes need. A card much larger than
    the canonical size is first shrunk by area averaging, so fine stripes blend into a tint
    instead of aliasing into false patterns. With ``long_side=False`` the side from the first
    to the second corner is laid horizontally as given, even when it is the shorter one.
    """
    width, height = size
    corners = np.asarray(corners_xy, dtype=np.float32).reshape(4, 2)
    if long_side:
        corners = long_side_first(corners)
    shrink = min(1.0, 1.5 * width / max(1.0, float(side_lengths(corners).max())))
    if shrink < 0.9:
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(image.shape[1], x1), min(image.shape[0], y1)
        if x1 - x0 > 4 and y1 - y0 > 4:
            patch = image[y0:y1, x0:x1]
            new_size = (
                max(1, round(patch.shape[1] * shrink)),
                max(1, round(patch.shape[0] * shrink)),
            )
            image = cv2.resize(patch, new_size, interpolation=cv2.INTER_AREA)
            scale = np.float32([new_size[0] / patch.shape[1], new_size[1] / patch.shape[0]])
            corners = (corners - np.float32([x0, y0])) * scale
    target = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    matrix = cv2.getPerspectiveTransform(corners, target)
    return cv2.warpPerspective(
        image, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
