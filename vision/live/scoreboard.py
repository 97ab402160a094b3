"""The scoreboard of a refereed game, drawn in the picture's top-left corner.

Drawing only: the lines come from the game (``app.refereeing.LiveGame.scoreboard``). The
panel is part of the picture, so ``--save-video`` and saved frames keep it.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from setvision.vision.report.overlay import bgr

PANEL_RGB = (15, 15, 15)
SCORE_RGB = (255, 220, 90)
TEXT_RGB = (235, 235, 235)


def _measure(shape: tuple[int, ...], lines: Sequence[str]):
    width = shape[1]
    unit = max(0.6, width / 1100)
    face, thickness = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(unit))
    scale, line_height, margin = 0.55 * unit, round(22 * unit), round(8 * unit)
    sizes = [cv2.getTextSize(text, face, scale, thickness)[0][0] for text in lines]
    panel_width = min(width, max(sizes, default=0) + 2 * margin)
    panel_height = min(shape[0], line_height * len(lines) + margin)
    return face, thickness, scale, line_height, margin, sizes, panel_width, panel_height


def scoreboard_box(shape: tuple[int, ...], lines: Sequence[str]) -> tuple[int, int, int, int]:
    """Where ``draw_scoreboard`` puts ``lines`` on an image of this shape: (x, y, width,
    height), the top-left corner; (0, 0, 0, 0) for no lines. The annotation's legend keeps
    off it (``Annotator.annotate(keep_clear=...)``)."""
    if not lines:
        return 0, 0, 0, 0
    *_, panel_width, panel_height = _measure(shape, lines)
    return 0, 0, panel_width, panel_height


def draw_scoreboard(image: np.ndarray, lines: Sequence[str], opacity: float = 0.75) -> np.ndarray:
    """A copy of ``image`` ((H, W, 3) uint8 BGR) with ``lines`` on a dark panel; the first
    line (the scores) is drawn brighter."""
    if not lines:
        return image
    picture = image.copy()
    width = picture.shape[1]
    measured = _measure(picture.shape, lines)
    face, thickness, scale, line_height, margin, sizes, panel_width, panel_height = measured
    region = picture[:panel_height, :panel_width]
    region[:] = (region * (1 - opacity) + np.array(bgr(PANEL_RGB)) * opacity).astype(np.uint8)
    for row, (text, size) in enumerate(zip(lines, sizes), 1):
        fit = scale * min(1.0, (width - 2 * margin) / max(size, 1))
        colour = bgr(SCORE_RGB if row == 1 else TEXT_RGB)
        cv2.putText(picture, text, (margin, row * line_height), face, fit, colour, thickness,
                    cv2.LINE_AA)  # fmt: skip
    return picture
