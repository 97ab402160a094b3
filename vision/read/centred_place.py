"""A place the card net sees, moved so that its middle is its print's: a card's symbols sit in
the card's middle both ways.

The net's outline of a place is coarse (its maps step 4 work pixels), and where the card's own
edges are faint (a grey card on a pale ledge in shade) neither the edges nor the paper outline
it better. Its symbols still show: the place moved by as much as their middle lies off its own
is read as one more variant (``rescue.outline_variants``).
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.geometry import long_side_index, pixel_corners
from setvision.vision.read.features import extract
from setvision.vision.read.rectify import rectify

#: A place is moved when its symbols' middle lies further from its own than this share of its
#: length or width; nearer, it is centred on them already.
MIN_SHIFT = 0.03


def centred_on_symbols(image: np.ndarray, corners: np.ndarray) -> np.ndarray | None:
    """``corners`` (4, 2; image pixels) moved so that their middle is the middle of the symbols
    they hold, laid out as the reader lays a card out; None where no symbol shows or the
    symbols are centred already."""
    corners = np.asarray(corners, np.float32)
    lengthwise = np.roll(corners, -long_side_index(corners), axis=0)
    card = rectify(image, lengthwise, long_side=False)
    symbols = extract(card).symbols
    if not symbols:
        return None
    points = np.concatenate([s.reshape(-1, 2) for s in symbols]).astype(np.float32)
    height, width = card.shape[:2]
    middle = (points.min(axis=0) + points.max(axis=0)) / 2
    centre = np.float32([(width - 1) / 2, (height - 1) / 2])
    if (np.abs(middle - centre) / np.float32([width, height])).max() < MIN_SHIFT:
        return None
    to_image = cv2.getPerspectiveTransform(pixel_corners(width, height), lengthwise)
    start, end = cv2.perspectiveTransform(np.float32([[centre, middle]]), to_image)[0]
    return corners + (end - start)
