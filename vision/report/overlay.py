"""Draw a Layout on its photo: numbered cards, each set in its own colour, a legend, the verdict.

Drawing only: the annotator holds its style and never analyses anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.layout import Layout, verdict_message

REVEALS = ("none", "count", "one", "all")

#: Set colours as RGB, converted to BGR only at the OpenCV call.
SET_COLOURS_RGB = (
    (255, 196, 0), (0, 200, 255), (255, 64, 160), (120, 255, 60), (255, 120, 0),
    (170, 110, 255), (0, 255, 190), (255, 255, 90), (90, 160, 255), (255, 150, 200),
)  # fmt: skip
CARD_RGB = (235, 235, 235)
UNCERTAIN_RGB = (255, 40, 40)
IGNORED_RGB = (140, 140, 140)
TEXT_RGB = (255, 255, 255)
PANEL_RGB = (20, 20, 20)
#: A place where a card may be missed (``Layout.possible``) is outlined in dashes this many line
#: widths long, with as long gaps: a place to look at, not a card read.
DASH = 4


def bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """An RGB colour as OpenCV draws it (blue, green, red)."""
    return rgb[2], rgb[1], rgb[0]


def _shrunk(corners: np.ndarray, pixels: float) -> np.ndarray:
    """The quad moved ``pixels`` towards its centre (to nest several set outlines)."""
    centre = corners.mean(axis=0)
    distance = np.linalg.norm(corners - centre, axis=1, keepdims=True)
    return centre + (corners - centre) * np.clip(1 - pixels / np.maximum(distance, 1), 0.2, 1)


def dashed_outline(canvas: np.ndarray, corners: np.ndarray, colour_bgr, thickness: int) -> None:
    """A closed outline through ``corners`` drawn in dashes of ``DASH`` line widths."""
    step = DASH * thickness
    corners = np.asarray(corners, np.float64)
    for start, end in zip(corners, np.roll(corners, -1, axis=0)):
        length = float(np.linalg.norm(end - start))
        for along in np.arange(0.0, length, 2 * step):
            a = start + (end - start) * along / length
            b = start + (end - start) * min(along + step, length) / length
            cv2.line(canvas, (round(a[0]), round(a[1])), (round(b[0]), round(b[1])), colour_bgr,
                     thickness, cv2.LINE_AA)  # fmt: skip


def label_anchor(corners: np.ndarray) -> np.ndarray:
    """Where a card's number goes: between its centre and its top edge, over the margin above
    the symbols rather than on them (the player checks the symbols against the reading)."""
    centre = corners.mean(axis=0)
    middles = (corners + np.roll(corners, -1, axis=0)) / 2
    top = middles[np.argmin(middles[:, 1])]
    return centre + 0.72 * (top - centre)


@dataclass(frozen=True)
class Annotator:
    """How annotations look: ``reveal`` sets how much of the answer is shown."""

    reveal: str = "all"
    show_confidence: bool = False

    def __post_init__(self) -> None:
        if self.reveal not in REVEALS:
            raise ValueError(f"reveal must be one of {', '.join(REVEALS)}, got {self.reveal!r}")

    def annotate(
        self,
        image: np.ndarray,
        layout: Layout,
        message: str | None = None,
        highlight: tuple[int, ...] = (),
        keep_clear: tuple[tuple[int, int, int, int], ...] = (),
    ) -> np.ndarray:
        """A copy of ``image`` (whose pixels match the layout's corners) with the layout drawn;
        the legend stays off the rectangles ``keep_clear`` (x, y, width, height: a scoreboard)
        unless every corner falls on them."""
        canvas = image.copy()
        unit = max(1.0, max(canvas.shape[:2]) / 700)
        thickness = max(1, round(2 * unit))
        font = 0.6 * unit
        sets = layout.sets
        shown = sets if self.reveal == "all" else sets[:1] if self.reveal == "one" else []
        uncertain = set(layout.uncertain)
        # where a card may be missed matters when no set is shown: on tables never seen, nearly
        # a photo in three read complete names such a place: beside the sets found, mostly noise
        places = layout.possible if not sets else ()

        for ignored in layout.ignored:
            cv2.polylines(canvas, [ignored.corners_xy.astype(np.int32)], True,
                          bgr(IGNORED_RGB), thickness, cv2.LINE_AA)  # fmt: skip
        for place in places:
            dashed_outline(canvas, place, bgr(UNCERTAIN_RGB), thickness)
        for card_id, reading in enumerate(layout.cards, 1):
            colour = UNCERTAIN_RGB if card_id in uncertain else CARD_RGB
            cv2.polylines(canvas, [reading.corners_xy.astype(np.int32)], True, bgr(colour),
                          thickness, cv2.LINE_AA)  # fmt: skip
        for k, found in enumerate(shown):
            colour = bgr(SET_COLOURS_RGB[k % len(SET_COLOURS_RGB)])
            for card_id in found:
                nest = (2 + (k % 6) * 1.6) * thickness * 1.5
                quad = _shrunk(layout.cards[card_id - 1].corners_xy, nest)
                cv2.polylines(canvas, [quad.astype(np.int32)], True, colour,
                              max(2, round(1.6 * thickness)), cv2.LINE_AA)  # fmt: skip
        for card_id in highlight:
            if 1 <= card_id <= len(layout.cards):
                quad = layout.cards[card_id - 1].corners_xy
                cv2.polylines(canvas, [quad.astype(np.int32)], True, (0, 255, 255),
                              3 * thickness, cv2.LINE_AA)  # fmt: skip
        for card_id, reading in enumerate(layout.cards, 1):
            label = str(card_id) + ("?" if card_id in uncertain else "")
            if self.show_confidence:
                label += f" {reading.confidence:.0%}"
            self._label(canvas, label_anchor(reading.corners_xy), label, font, thickness,
                        UNCERTAIN_RGB if card_id in uncertain else PANEL_RGB)  # fmt: skip
        for place in places:
            self._label(canvas, np.asarray(place).mean(axis=0), "?", font, thickness,
                        UNCERTAIN_RGB)  # fmt: skip

        lines = []
        if self.reveal in ("one", "all"):
            for k, found in enumerate(shown):
                lines.append((f"set {k + 1}: " + " ".join(map(str, found)),
                              SET_COLOURS_RGB[k % len(SET_COLOURS_RGB)]))  # fmt: skip
            if self.reveal == "one" and len(sets) > 1:
                lines.append((f"(+{len(sets) - 1} more)", TEXT_RGB))
        verdict = message or verdict_message(layout, self.reveal)
        self._panel(canvas, lines, verdict, font, thickness, layout, keep_clear)
        return canvas

    @staticmethod
    def _label(canvas, centre, text, font, thickness, background_rgb) -> None:
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font * 1.2, thickness)
        pad = max(3, thickness * 2)
        # inside the picture, also for a card cut by its border
        x = int(np.clip(centre[0] - w / 2, pad, max(pad, canvas.shape[1] - w - pad)))
        y = int(np.clip(centre[1] + h / 2, h + pad, max(h + pad, canvas.shape[0] - base - pad)))
        cv2.rectangle(canvas, (x - pad, y - h - pad), (x + w + pad, y + base + pad // 2),
                      bgr(background_rgb), -1)  # fmt: skip
        cv2.putText(canvas, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, font * 1.2,
                    bgr(TEXT_RGB), thickness, cv2.LINE_AA)  # fmt: skip

    @staticmethod
    def _panel(canvas, lines, verdict, font, thickness, layout: Layout, keep_clear=()) -> None:
        """The legend and verdict where they cover the fewest cards: in the image corner that
        covers least, the sets in as many columns (up to four) as that takes, a long verdict
        over several lines."""
        height_px, width_px = canvas.shape[:2]
        face = cv2.FONT_HERSHEY_SIMPLEX

        def text_width(text: str) -> int:
            return cv2.getTextSize(text, face, font, thickness)[0][0]

        widest = max(text_width(t) for t in [*(t for t, _ in lines), *verdict.split("; ")])
        if widest > 0.95 * width_px:  # shrink the text until the widest line fits
            font *= 0.95 * width_px / widest
        footer = wrap_parts(verdict, max(0.6 * width_px, min(widest, 0.95 * width_px)), text_width)
        entries = [text for text, _ in lines] + footer
        heights = [cv2.getTextSize(t, face, font, thickness)[0][1] for t in entries]
        line_height = int(max(heights) * 1.8)
        widths = [text_width(t) + line_height for t, _ in lines]
        cards = np.zeros((height_px, width_px), np.uint8)
        for card in (*layout.cards, *layout.ignored):  # a card cut off is still a card
            cv2.fillConvexPoly(cards, card.corners_xy.astype(np.int32), 1)
        for place in layout.possible:  # a card may lie there: keep it in view too
            cv2.fillConvexPoly(cards, np.asarray(place).astype(np.int32), 1)
        footer_width = max(text_width(t) for t in footer) + line_height
        count = len(layout.cards) + len(layout.ignored)
        p = place_panel(cards, count, widths, footer_width, line_height, len(footer), keep_clear)
        region = canvas[p.y : p.y + p.height, p.x : p.x + p.width]
        region[:] = (region * 0.3 + np.array(bgr(PANEL_RGB)) * 0.7).astype(np.uint8)
        for i, (text, colour) in enumerate(lines):
            column, row = divmod(i, p.rows)
            x = p.x + line_height // 2 + sum(p.column_widths[:column])
            cv2.putText(canvas, text, (x, p.y + line_height * (row + 1)), face, font,
                        bgr(colour), thickness, cv2.LINE_AA)  # fmt: skip
        for k, text in enumerate(footer):
            y = p.y + line_height * (p.rows + 1 + k)
            cv2.putText(canvas, text, (p.x + line_height // 2, y), face, font, bgr(TEXT_RGB),
                        thickness, cv2.LINE_AA)  # fmt: skip


def wrap_parts(text: str, width: float, measure) -> list[str]:
    """``text`` in lines no wider than ``width`` (by ``measure``), broken only after "; "."""
    lines: list[str] = []
    for part in text.split("; "):
        if lines and measure(lines[-1] + "; " + part) <= width:
            lines[-1] += "; " + part
        else:
            if lines:
                lines[-1] += ";"
            lines.append(part)
    return lines


@dataclass(frozen=True)
class PanelPlace:
    """Where the legend goes and how its set lines are laid out in columns."""

    x: int
    y: int
    width: int
    height: int
    rows: int
    column_widths: tuple[int, ...]


def place_panel(
    cards: np.ndarray,
    count: int,
    widths: list[int],
    verdict_width: int,
    line_height: int,
    verdict_lines: int = 1,
    keep_clear: tuple[tuple[int, int, int, int], ...] = (),
) -> PanelPlace:
    """The image corner and column count (up to four) for a legend of lines ``widths`` wide
    (and the verdict's lines below them) that covers the least of the cards (``cards``: 1 on a
    card); another column only when it uncovers at least a twentieth of a card. A corner on a
    rectangle of ``keep_clear`` (x, y, width, height) comes after every corner off them."""
    height_px, width_px = cards.shape
    card_area = max(1.0, float(cards.sum()) / max(1, count))
    options = []
    for columns in range(1, min(4, max(1, len(widths))) + 1):
        rows = -(-len(widths) // columns)
        column_widths = tuple(
            max(widths[c * rows : (c + 1) * rows], default=0) for c in range(columns)
        )
        if columns > 1 and sum(column_widths) > width_px:
            break
        width = min(width_px, max(sum(column_widths), verdict_width))
        height = min(height_px, line_height * (rows + verdict_lines) + line_height // 2)
        for x, y in ((0, 0), (width_px - width, 0), (0, height_px - height),
                     (width_px - width, height_px - height)):  # fmt: skip
            covered = float(cards[y : y + height, x : x + width].sum())
            clash = sum(_overlap((x, y, width, height), box) for box in keep_clear)
            place = PanelPlace(x, y, width, height, rows, column_widths)
            options.append((clash, round(20 * covered / card_area), columns, place))
    return min(options, key=lambda o: o[:3])[3]


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> int:
    """The area two rectangles (x, y, width, height) share."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, width) * max(0, height)
