"""The scoreboard of a refereed game, drawn in the picture's top-left corner.

Drawing only: the lines come from the game (``app.refereeing.LiveGame.scoreboard``). The
panel is part of the picture, so ``--save-video`` and saved frames keep it.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

PANEL_RGB = (15, 15, 15)
SCORE_RGB = (255, 220, 90)
TEXT_RGB = (235, 235, 235)


def _bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return rgb[2], rgb[1], rgb[0]


def draw_scoreboard(image: np.ndarray, lines: Sequence[str], opacity: float = 0.75) -> np.ndarray:
    """A copy of ``image`` ((H, W, 3) uint8 BGR) with ``lines`` on a dark panel; the first
    line (the scores) is drawn brighter."""
    if not lines:
        return image
    picture = image.copy()
    width = picture.shape[1]
    unit = max(0.6, width / 1100)
    face, thickness = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(unit))
    scale, line_height, margin = 0.55 * unit, round(22 * unit), round(8 * unit)
    sizes = [cv2.getTextSize(text, face, scale, thickness)[0][0] for text in lines]
    panel_width = min(width, max(sizes) + 2 * margin)
    panel_height = min(picture.shape[0], line_height * len(lines) + margin)
    region = picture[:panel_height, :panel_width]
    region[:] = (region * (1 - opacity) + np.array(_bgr(PANEL_RGB)) * opacity).astype(np.uint8)
    for row, (text, size) in enumerate(zip(lines, sizes), 1):
        fit = scale * min(1.0, (width - 2 * margin) / max(size, 1))
        colour = _bgr(SCORE_RGB if row == 1 else TEXT_RGB)
        cv2.putText(picture, text, (margin, row * line_height), face, fit, colour, thickness,
                    cv2.LINE_AA)  # fmt: skip
    return picture
