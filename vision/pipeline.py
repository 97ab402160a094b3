"""One forward pass from a photo to a Layout: validate, find, rectify, measure, classify, settle."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from setvision.solver import ATTRIBUTES
from setvision.vision.find.finder import find_cards, unexplained_cards
from setvision.vision.find.fit import CARD_RATIO
from setvision.vision.find.outlines import Outline
from setvision.vision.geometry import (
    long_side_index,
    order_corners,
    pixel_corners,
    scaled_about_centre,
    touches_border,
)
from setvision.vision.image import Photo, as_bgr
from setvision.vision.layout import NO_SYMBOLS, UNSURE, CardReading, Ignored, Layout
from setvision.vision.order import reading_order
from setvision.vision.read.classify import AttributeModels, load_models
from setvision.vision.read.cut_cards import (
    COMPLETED_PAST_EDGE,
    CORNER_COMPLETED,
    COVERED_AT_END,
    KNOWN_NUMBER,
    NEXT_IN_ROW,
    TURNED_HALF,
    card_frame,
    corner_completed,
    count_by_margin,
    cut_side,
    known_numbers,
    row_past_edge,
    shown_lengthwise,
    shown_reach,
    symbol_beyond_row,
)
from setvision.vision.read.features import (
    MARGIN,
    CardFeatures,
    complete_row,
    extract,
    may_lack_a_symbol,
)
from setvision.vision.read.outline_doubts import doubt_symbols_beyond, doubt_turned_shapes
from setvision.vision.read.rectify import rectify
from setvision.vision.read.rescue import (
    RESCUE_CONFIDENCE,
    best_reading,
    outline_variants,
    still_possible,
)
from setvision.vision.read.settle import settle
from setvision.vision.read.vetting import margin_texture, set_aside

#: Why a card cut by the image's edge is not read: a symbol may lie beyond it.
CUT_BY_BORDER = "cut by the image border"
#: Why a card found partly under another is not read: a symbol may lie under the card on top.
PARTLY_COVERED = "partly covered by another card"
#: A symbol of a cut card must lie this many image pixels inside the image (else it may be cut).
SYMBOL_MARGIN = 2.0
#: A card cut along its length is first laid out this many times as far as it shows, blank
#: beyond the photo, so that symbols close to the cut lie clear of the margins ``extract``
#: leaves out.
CUT_ROOM = 1.25
#: A symbol cut by the photo's edge is blanked this share of its width beyond its box.
CUT_SYMBOL_PAD = 0.15
#: Ink of the row's colour along the photo's edge where it cuts a card, past its whole symbols,
#: on at least this share of a symbol's height across the card, is a symbol cut there
#: (``_ink_at_cut``; a sliver too thin to read as a symbol; a squiggle's shows in two pieces).
CUT_INK_RUN = 0.4
#: A card cut by the photo's edge is completed by turning it half round when at least this share
#: of it shows (half, and a little to spare): of its width when cut along its length through
#: every symbol, of its length when cut across it with no margin telling its number.
TURN_SHOWN = 0.55
#: A card cut along its length is looked past its ends this many symbol widths for a symbol
#: its outline left out (a three outlined round two of its symbols): one whole symbol at the
#: furthest a row's next symbol stands (``NEXT_IN_ROW``).
PAST_THE_ENDS = 1 + NEXT_IN_ROW

#: An outline found on which no symbol is found, or whose symbol is cut by its end, is measured
#: once more grown by this share of its size about its centre (``CardReader.measure_found``).
NO_SYMBOLS_GROWTH = 0.1
#: Adjusts a layout's probabilities (e.g. per-photo colour calibration); must not reorder cards.
Adjuster = Callable[[list[CardFeatures], dict[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class MeasuredCard:
    """A found card before classification: where it is and what was measured."""

    outline: Outline
    features: CardFeatures
    #: the finder's probability that the outline is a card
    found_probability: float = 1.0
    #: how textured the margin of the card as shown is (``vetting.margin_texture``)
    margin: float = 0.0


def symbols_complete(features: CardFeatures, card_size: tuple[int, int]) -> bool:
    """The symbols stand alike, centred and evenly spaced: none is cut off or covered."""
    return complete_row(features.symbols, card_size[0])


def _row_extent(symbols: list[np.ndarray]) -> tuple[int, int, float]:
    """Where a row of symbols starts and ends along a laid-out card, and a symbol's width (the
    median): what the margins that tell a card's number (``count_by_margin``) are made of."""
    boxes = [cv2.boundingRect(c) for c in symbols]
    start = min(x for x, _, _, _ in boxes)
    end = max(x + w for x, _, w, _ in boxes)
    return start, end, float(np.median([w for _, _, w, _ in boxes]))


def covered_at_one_end(features: CardFeatures, card_size: tuple[int, int]) -> bool:
    """A card partly under another whose outline runs on under it: its symbols a row of their
    own (alike, evenly spaced) off the card's middle, and the margin at exactly one end of the
    card telling their number (that end whole, the other under the card on top)."""
    symbols = features.symbols
    if not symbols or len(symbols) > 3:
        return False
    start, end, _ = _row_extent(symbols)
    if not complete_row(symbols, start + end):  # alike and evenly spaced, were it centred
        return False
    return _ends_telling_count(symbols, card_size[0]) == 1


def _ends_telling_count(symbols: list[np.ndarray], card_width: int) -> int:
    """How many of a laid-out card's two end margins, beside its row of ``symbols``, tell the
    row's number of symbols (``count_by_margin``): both on a whole card."""
    start, end, symbol_width = _row_extent(symbols)
    margins = (start, card_width - end)
    return [count_by_margin(m, symbol_width) for m in margins].count(len(symbols))


def _upright(features: CardFeatures) -> bool:
    """Symbols were found and stand upright, as they do on a card laid landscape."""
    if not features.symbols:
        return False
    boxes = [cv2.boundingRect(c) for c in features.symbols]
    return sum(h > w for _, _, w, h in boxes) * 2 > len(boxes)


def _moved(outline: Outline, corners: np.ndarray, image: np.ndarray) -> Outline:
    """``outline`` with other ``corners``, touching the border of ``image`` if it did or
    they do."""
    size = (image.shape[1], image.shape[0])
    touches = outline.touches_border or touches_border(corners, size, 0.0)
    return replace(outline, corners_xy=corners, touches_border=touches)


def _grown(outline: Outline, image: np.ndarray) -> Outline:
    """``outline`` grown by ``NO_SYMBOLS_GROWTH`` of its size about its centre (``_moved``)."""
    return _moved(outline, scaled_about_centre(outline.corners_xy, 1 + NO_SYMBOLS_GROWTH), image)


def _relaid(outline: Outline, corners: np.ndarray, image: np.ndarray) -> Outline:
    """``outline`` moved onto other ``corners`` (``_moved``), put in order and its long side
    told by their shape, as a place's outline is."""
    ordered = order_corners(np.asarray(corners, np.float32))
    return replace(_moved(outline, ordered, image), long_side=long_side_index(ordered))


def worth_reading_again(
    outline: Outline, found_probability: float, confidence: float, margin: float
) -> bool:
    """Whether an outline found and read so (``set_aside``'s terms) is read again on its
    variants (``CardReader.read_unsure_again``): it would be set aside, and is not cut by the
    image's border (a cut card's number is told from its margins, which a variant moves)."""
    return not outline.touches_border and set_aside(found_probability, confidence, margin)


def _laid_out(
    image: np.ndarray, corners: np.ndarray, long_side: int
) -> tuple[np.ndarray, CardFeatures, np.ndarray]:
    """The card rectified lengthwise, its features, and its corners in the order laid out.

    The detector judged the card's length from its symbols; if they still lie flat, the other
    way round may read better."""
    lengthwise = np.roll(corners, -long_side, axis=0)
    card = rectify(image, lengthwise, long_side=False)
    features = extract(card)
    if not _upright(features):
        turned_corners = np.roll(lengthwise, 1, axis=0)
        turned = rectify(image, turned_corners, long_side=False)
        turned_features = extract(turned)
        if _upright(turned_features):
            return turned, turned_features, turned_corners
    return card, features, lengthwise


def _paper_colour(shown_card: np.ndarray) -> tuple[float, ...]:
    """The paper colour (BGR) of a card's part shown, laid out: what is shown beyond the photo
    when the card is completed past its edge."""
    return tuple(float(v) for v in np.median(shown_card.reshape(-1, 3), axis=0))


def _paper_pixel(paper: tuple[float, ...]) -> np.ndarray:
    """The blank ``paper`` colour (BGR) as one pixel of a card image."""
    return np.clip(np.round(paper), 0, 255).astype(np.uint8)


def _on_paper(
    image: np.ndarray, corners: np.ndarray, paper: tuple[float, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """The part of ``image`` around ``corners``, with what lies beyond the image shown as blank
    ``paper`` (BGR), and the corners in its pixels."""
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 2
    canvas = np.empty((y1 - y0, x1 - x0, 3), np.uint8)
    canvas[:] = _paper_pixel(paper)
    height, width = image.shape[:2]
    top, left, bottom, right = max(0, y0), max(0, x0), min(height, y1), min(width, x1)
    if bottom > top and right > left:
        canvas[top - y0 : bottom - y0, left - x0 : right - x0] = image[top:bottom, left:right]
    return canvas, (corners - np.float32([x0, y0])).astype(np.float32)


def _to_image(card: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The transform from a laid-out ``card`` image's pixels to the photo's (``frame``: its
    corners there)."""
    height, width = card.shape[:2]
    corners = pixel_corners(width, height)
    return cv2.getPerspectiveTransform(corners, np.float32(frame))


def _at_border(contour: np.ndarray, to_image: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether a symbol (a contour in a laid-out card's pixels) may be cut by the photo's edge."""
    points = contour.reshape(-1, 1, 2).astype(np.float32)
    return touches_border(cv2.perspectiveTransform(points, to_image).reshape(-1, 2), size,
                          SYMBOL_MARGIN)  # fmt: skip


def _at_photo_edge(card: np.ndarray, frame: np.ndarray, image: np.ndarray) -> np.ndarray:
    """Which pixels of a laid-out ``card`` (``frame``: its corners in ``image``) lie within
    ``SYMBOL_MARGIN`` of the photo's edge or beyond it."""
    height, columns = card.shape[:2]
    grid = np.stack(np.meshgrid(np.arange(columns), np.arange(height)), axis=-1)
    at = cv2.perspectiveTransform(grid.reshape(-1, 1, 2).astype(np.float32), _to_image(card, frame))
    at = at.reshape(height, columns, 2)
    size = np.array([image.shape[1], image.shape[0]]) - 1
    return ((at < SYMBOL_MARGIN) | (at > size - SYMBOL_MARGIN)).any(axis=-1)


def _ink_at_cut(
    image: np.ndarray, card: np.ndarray, frame: np.ndarray, features: CardFeatures,
    paper: tuple[float, ...],
) -> bool:  # fmt: skip
    """Whether a symbol is cut by the photo's edge past the whole ones of ``card`` (a cut
    card's part shown laid out, ``frame``: its corners in the photo; ``features`` measured on
    it): ink, nearer the symbols' colour than the ``paper``'s, within ``SYMBOL_MARGIN`` of the
    photo's edge, on ``CUT_INK_RUN`` of a symbol's height across the card where its row
    runs. Reading leaves out a card's ends, so a sliver of a symbol there goes unseen."""
    if not features.symbols:
        return False
    height, columns = card.shape[:2]
    near = _at_photo_edge(card, frame, image)
    boxes = [cv2.boundingRect(c) for c in features.symbols]
    near[:, : max(x + w for x, _, w, _ in boxes)] = False
    # across the card, only where its row of symbols runs: table shows by its rounded corners
    near[: min(y for _, y, _, _ in boxes)] = False
    near[max(y + h for _, y, _, h in boxes) :] = False
    lines = np.zeros((height, columns), np.uint8)
    cv2.drawContours(lines, features.symbols, -1, 1, thickness=2)
    pixels = card.astype(np.float32)
    ink = np.median(pixels[lines > 0], axis=0)
    paper_pixel = np.float32(paper)
    inky = np.linalg.norm(pixels - ink, axis=-1) < np.linalg.norm(pixels - paper_pixel, axis=-1)
    symbol_height = float(np.median([h for _, _, _, h in boxes]))
    return int((near & inky).any(axis=1).sum()) >= CUT_INK_RUN * symbol_height


def _past_the_edge(
    image: np.ndarray, shown: np.ndarray, frame: np.ndarray, card: np.ndarray,
    features: CardFeatures, paper: tuple[float, ...], ink_cut: bool = False,
) -> CardFeatures | None:  # fmt: skip
    """A cut card whose next symbol lies beyond the photo's edge or is cut by it
    (``row_past_edge``), read from its whole symbols: ``shown`` is the part shown
    (``shown_lengthwise``), ``frame`` its ``card_frame``, ``card`` that part laid out as a card
    (lengths along it keep their proportions), ``features`` measured on it, ``ink_cut``:
    whether a symbol's sliver shows at the edge (``_ink_at_cut``). The whole card is laid
    out, what lies after its whole symbols blanked with the ``paper`` colour, and measured;
    None when the number is not known that way."""
    size = (image.shape[1], image.shape[0])
    to_image = _to_image(card, frame)
    cut = [_at_border(c, to_image, size) for c in features.symbols]
    whole = [c for c, is_cut in zip(features.symbols, cut) if not is_cut]
    row = row_past_edge(whole, [c for c, is_cut in zip(features.symbols, cut) if is_cut],
                        card.shape[1], features.values["cut_at_end"] > 0 or ink_cut)  # fmt: skip
    if row is None:
        return None
    along = float(np.linalg.norm(frame[1] - frame[0])) / card.shape[1]  # photo pixels per pixel
    laid = rectify(*_on_paper(image, card_frame(shown, row.length() * along), paper),
                   long_side=False)  # fmt: skip
    blank_from = round((row.whole_end + row.gap / 2) / row.length() * laid.shape[1])
    laid[:, blank_from:] = _paper_pixel(paper)
    read = extract(laid)
    if len(read.symbols) != row.whole:
        return None
    read.values[KNOWN_NUMBER] = float(row.count)
    if not row.sure():
        read.values[COMPLETED_PAST_EDGE] = 1.0
    return read


def _widened(frame: np.ndarray, reach: float) -> np.ndarray:
    """``frame`` (its first side along the card) reaching ``reach`` pixels further past both
    ends of that side."""
    frame = np.asarray(frame, np.float64)
    step = frame[1] - frame[0]
    step *= reach / max(float(np.linalg.norm(step)), 1e-9)
    return np.float32([frame[0] - step, frame[1] + step, frame[2] + step, frame[3] - step])


def _row_runs_on(
    image: np.ndarray, lying: np.ndarray, part: np.ndarray, row: CardFeatures,
    paper: tuple[float, ...],
) -> bool:  # fmt: skip
    """Whether the row of symbols of the card laid out as ``part`` from ``lying`` (``row``: its
    features) runs on past its ends, looked at ``PAST_THE_ENDS`` further along its length
    (``symbol_beyond_row``): its outline stops short of the card."""
    along_px = float(np.linalg.norm(lying[1] - lying[0])) / part.shape[1]  # photo px per pixel
    symbol_width = float(np.median([cv2.boundingRect(c)[2] for c in row.symbols]))
    # reading leaves out a margin at each end of the wider view too
    reach = (PAST_THE_ENDS * symbol_width + MARGIN * part.shape[1]) / (1 - 2 * MARGIN)
    width = round(part.shape[1] + 2 * reach)  # pixels as large as ``part``'s
    view = rectify(*_on_paper(image, _widened(lying, reach * along_px), paper),
                   (width, part.shape[0]), long_side=False)  # fmt: skip
    span = (reach, reach + part.shape[1])
    return symbol_beyond_row(extract(view).symbols, span, width, MARGIN * width)


def _completed_turned(
    image: np.ndarray, frame: np.ndarray, paper: tuple[float, ...]
) -> np.ndarray | None:
    """The card at ``frame`` (its corners in the photo, the first side along its length) laid
    out, every pixel at or beyond the photo's edge taken from the card turned 180 degrees about
    its middle; None when less than half of it shows (turned, it would not cover what is
    missing)."""
    card = rectify(*_on_paper(image, frame, paper), long_side=False)
    # pixels at the photo's very edge are no more the card's own than those beyond it
    beyond = _at_photo_edge(card, frame, image)
    if (beyond & beyond[::-1, ::-1]).any():
        return None
    card[beyond] = card[::-1, ::-1][beyond]
    return card


def _turned_whole(
    image: np.ndarray, shown: np.ndarray, paper: tuple[float, ...], count: int
) -> CardFeatures | None:
    """A card cut along its length through every one of its ``count`` symbols (``shown``: the
    part shown, ``shown_lengthwise``), completed by turning it half round: a SET card, its row
    and each symbol look the same turned 180 degrees about their middle, so what lies beyond
    the photo is what shows past the card's middle. Its width is its whole side's length over
    ``CARD_RATIO``; at least ``TURN_SHOWN`` of it must show. None when it cannot be read so."""
    length = float(np.linalg.norm(shown[0] - shown[3]))  # the whole side
    width = length / CARD_RATIO
    if shown_reach(shown) < TURN_SHOWN * width:
        return None
    frame = np.roll(card_frame(shown, width), 1, axis=0)
    card = _completed_turned(image, frame, paper)
    if card is None:
        return None
    height, columns = card.shape[:2]
    read = extract(card)
    if len(read.symbols) != count or not symbols_complete(read, (columns, height)):
        return None
    read.values[KNOWN_NUMBER] = float(count)
    read.values[TURNED_HALF] = 1.0
    return read


def _turned_across(
    image: np.ndarray, shown: np.ndarray, paper: tuple[float, ...]
) -> CardFeatures | None:
    """A card cut across its length (``shown``: the part shown, ``shown_lengthwise``, from its
    whole short side) that cannot be read from its margin, completed by turning it half round
    (as ``_turned_whole``): its length is its whole side's times ``CARD_RATIO``, at least
    ``TURN_SHOWN`` of it must show, and the margin on its whole side must tell the count read.
    It is never read surely (``outline_doubts``): where its length was misjudged, the seam runs
    through the symbols off their middle, so its shape is in doubt, and a one or two may hold
    one symbol more."""
    width = float(np.linalg.norm(shown[0] - shown[3]))  # the whole side
    length = width * CARD_RATIO
    if shown_reach(shown) < TURN_SHOWN * length:
        return None
    card = _completed_turned(image, card_frame(shown, length), paper)
    if card is None:
        return None
    read = extract(card)
    if not _upright(read) or not symbols_complete(read, (card.shape[1], card.shape[0])):
        return None
    start, _, symbol_width = _row_extent(read.symbols)
    if count_by_margin(start, symbol_width) != len(read.symbols):
        return None  # the margin on the whole side tells another number: the seam misplaced
    read.values[TURNED_HALF] = 1.0
    read.values[COMPLETED_PAST_EDGE] = 1.0
    return read


def _cut_lengthwise(
    image: np.ndarray, shown: np.ndarray, paper: tuple[float, ...], part_reads: bool
) -> CardFeatures | None:
    """A card cut by the photo's edge along its length (``shown``: the part shown from its
    whole long side, ``shown_lengthwise``), read completed. Its row of symbols runs the whole
    card, so every symbol shows, whole or cut, and their count is the card's number; symbols
    are centred across the card, so the margin before the whole ones on the whole side tells
    how far the card reaches past their far end. The card is read from its whole symbols, any
    cut one blanked with the ``paper`` colour. With every symbol cut, unless the part shown
    reads as a whole card (``part_reads``), the card is completed turned half round
    (``_turned_whole``). None when it is not read so."""
    size = (image.shape[1], image.shape[0])
    room = shown_reach(shown) * CUT_ROOM
    lying = np.roll(card_frame(shown, room), 1, axis=0)  # the whole side first: along the card
    part = rectify(*_on_paper(image, lying, paper), long_side=False)
    row = extract(part)
    if not _upright(row) or not complete_row(row.symbols, part.shape[1]):
        return None
    to_image = _to_image(part, lying)
    boxes = [cv2.boundingRect(c) for c in row.symbols]
    cut = [_at_border(c, to_image, size) for c in row.symbols]
    whole = [box for box, is_cut in zip(boxes, cut) if not is_cut]
    if not whole:
        return None if part_reads else _turned_whole(image, shown, paper, len(boxes))
    near = min(y for _, y, _, _ in whole)
    depth = max(part.shape[0] / CUT_ROOM, max(y + h for _, y, _, h in whole) + near)
    frame = np.roll(card_frame(shown, room * depth / part.shape[0]), 1, axis=0)
    card = rectify(*_on_paper(image, frame, paper), long_side=False)
    for (x, _, w, _), is_cut in zip(boxes, cut):
        if is_cut:  # the same columns: both frames share the whole side
            pad = max(2, round(CUT_SYMBOL_PAD * w))
            card[:, max(0, x - pad) : x + w + pad] = _paper_pixel(paper)
    read = extract(card)
    if len(read.symbols) != len(whole):
        return None
    to_image = _to_image(card, frame)
    if any(_at_border(c, to_image, size) for c in read.symbols):
        return None
    if may_lack_a_symbol(len(boxes)) and _row_runs_on(image, lying, part, row, paper):
        read.values["cut_at_end"] = 1.0  # its number read, but not surely
    if len(whole) == len(boxes):
        return read if symbols_complete(read, (card.shape[1], card.shape[0])) else None
    read.values[KNOWN_NUMBER] = float(len(boxes))
    return read


def _whole(
    image: np.ndarray, outline: Outline, shown_card: np.ndarray, part_reads: bool
) -> CardFeatures | Ignored | None:
    """A card cut by the image's edge across its length, judged whole: its features measured
    on its completed outline when every symbol shows, or on its two whole symbols when a
    third lies beyond the edge (``_past_the_edge``), else why it is not read; None when it is
    not cut that way (then only the part shown can be judged). ``shown_card``: the part shown
    laid out as any card is, whose paper's colour fills what lies beyond the image;
    ``part_reads``: whether it reads as a whole card."""
    size = (image.shape[1], image.shape[0])
    side = cut_side(outline.corners_xy, size)
    if side is None:
        return None
    # beyond the photo the card is shown blank: its paper's colour, no made-up streaks
    paper = _paper_colour(shown_card)
    shown = shown_lengthwise(outline.corners_xy, side)
    frame = card_frame(shown)
    card = rectify(*_on_paper(image, frame, paper), long_side=False)
    width = card.shape[1]
    shown_features = extract(card)
    if not _upright(shown_features):
        lengthwise = _cut_lengthwise(image, shown, paper, part_reads)
        if lengthwise is None and not shown_features.symbols:
            # no whole symbol shows: one cut through its middle across the card's length
            # leaves none to tell the card's direction by, so it may be cut across still
            return _turned_across(image, shown, paper)
        return lengthwise
    cut_short = Ignored(outline.corners_xy, CUT_BY_BORDER)
    start, end, symbol_width = (v / width for v in _row_extent(shown_features.symbols))
    # a margin on the whole side of another number of symbols (one lies beyond the edge), or
    # of no card, or a symbol's sliver at the edge; blank paper before the cut proves nothing
    ink_cut = _ink_at_cut(image, card, frame, shown_features, paper)
    if count_by_margin(start, symbol_width) != len(shown_features.symbols) or ink_cut:
        beyond = _past_the_edge(image, shown, frame, card, shown_features, paper, ink_cut)
        return beyond or _turned_across(image, shown, paper) or cut_short
    length = float(np.linalg.norm(frame[1] - frame[0]))
    whole = card_frame(shown, max(1.0, start + end) * length)
    card_whole = rectify(*_on_paper(image, whole, paper), long_side=False)
    features = extract(card_whole)
    to_image = _to_image(card_whole, whole)
    if not symbols_complete(features, (card_whole.shape[1], card_whole.shape[0])) or any(
        _at_border(c, to_image, size) for c in features.symbols
    ):
        beyond = _past_the_edge(image, shown, frame, card, shown_features, paper)
        return beyond or _turned_across(image, shown, paper) or cut_short
    features.values[COMPLETED_PAST_EDGE] = 1.0
    return features


def _corner_cut(image: np.ndarray, outline: Outline, shown_card: np.ndarray) -> CardFeatures | None:
    """A card with one corner beyond the image's edge (``corner_completed``), read completed:
    beyond the image it is shown blank (``shown_card``'s paper colour). Read only where its row
    of symbols shows whole, none of them at the image's edge, centred and evenly spaced, and
    the margins at both its ends tell the number of symbols: then no symbol hides beyond the
    corner. None otherwise."""
    size = (image.shape[1], image.shape[0])
    whole = corner_completed(outline.corners_xy, size)
    if whole is None:
        return None
    paper = _paper_colour(shown_card)
    canvas, local = _on_paper(image, whole, paper)
    card, features, laid = _laid_out(canvas, local, long_side_index(local))
    width = card.shape[1]
    if not symbols_complete(features, (width, card.shape[0])):
        return None
    if _ends_telling_count(features.symbols, width) != 2:
        return None
    to_image = _to_image(card, laid + (whole[0] - local[0]))
    if any(_at_border(c, to_image, size) for c in features.symbols):
        return None
    features.values[CORNER_COMPLETED] = 1.0
    return features


class CardReader:
    """Reads SET cards from images with a fixed model (and optional calibration)."""

    def __init__(self, models: AttributeModels | None = None, adjust: Adjuster | None = None):
        self.models = models if models is not None else load_models()
        self.adjust = adjust

    def measure(
        self, image: np.ndarray
    ) -> tuple[list[MeasuredCard], list[Ignored], dict, list[np.ndarray]]:
        """Find and measure every card of a BGR image (corners in its own pixels); also the
        card-like places not taken for cards."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        found = find_cards(image)
        outlines = found.outlines
        timings["find"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        measured, ignored = [], []
        for outline, probability, whole in zip(outlines, found.probabilities, found.uncovered_each):
            result = self.measure_found(image, outline, whole)
            if isinstance(result, MeasuredCard):
                measured.append(replace(result, found_probability=probability))
            else:
                ignored.append(result)
        taken = self.rescue(image, found.net_places)
        measured += taken
        cards = np.array([m.outline.corners_xy for m in taken], np.float32).reshape(-1, 4, 2)
        possible = unexplained_cards(found.possible, cards)  # a card taken explains its place
        shown = [m.outline.corners_xy for m in measured] + [i.corners_xy for i in ignored]
        possible = still_possible(image, possible, shown)
        timings["measure"] = (time.perf_counter() - start) * 1000
        return measured, ignored, timings, possible

    def rescue(
        self, image: np.ndarray, places: Sequence[Outline], level: float = RESCUE_CONFIDENCE
    ) -> list[MeasuredCard]:
        """The ``places`` where the card net sees a card that no candidate outlines, measured,
        that read as a card with at least ``level`` confidence (see ``vision.read.rescue``);
        the finder gave them no probability (0)."""
        taken = []
        for place in places:
            readings = self.read_place(image, place, level)
            best = best_reading([confidence for confidence, _ in readings], level)
            if best is not None:
                taken.append(replace(readings[best][1], found_probability=0.0))
        return taken

    def read_place(
        self, image: np.ndarray, place: Outline, retry_below: float = RESCUE_CONFIDENCE
    ) -> list[tuple[float, MeasuredCard]]:
        """A place measured and read alone (confidence, measurement): on its outline, then, when
        that reads below ``retry_below`` or cannot be measured, on its outline's variants
        (``outline_variants``); none when no outline of it can be measured."""
        first = self.measure_outline(image, place)
        readings = []
        if isinstance(first, MeasuredCard):
            readings.append((self.classify([first])[0].confidence, first))
        own = readings[0][0] if readings else None
        return readings + self.read_variants(image, place, own, retry_below)

    def read_variants(
        self,
        image: np.ndarray,
        place: Outline,
        confidence: float | None,
        level: float = RESCUE_CONFIDENCE,
    ) -> list[tuple[float, MeasuredCard]]:
        """A place's outline variants (``measure_variants``) measured and read alone
        (confidence, measurement)."""
        variants = self.measure_variants(image, place, confidence, level)
        return [(self.classify([variant])[0].confidence, variant) for variant in variants]

    def measure_variants(
        self,
        image: np.ndarray,
        place: Outline,
        confidence: float | None,
        level: float = RESCUE_CONFIDENCE,
    ) -> list[MeasuredCard]:
        """A place's outline variants (``outline_variants``, for its own outline read with
        ``confidence`` below ``level``) measured, those that can be."""
        measured = []
        for corners in outline_variants(image, place.corners_xy, confidence, level):
            variant = self.measure_outline(image, _relaid(place, corners, image))
            if isinstance(variant, MeasuredCard):
                measured.append(variant)
        return measured

    def measure_found(
        self, image: np.ndarray, outline: Outline, uncovered: Outline | None = None
    ) -> MeasuredCard | Ignored:
        """``measure_outline`` for an outline the finder found; where no symbol is found on it,
        once more on it grown by ``NO_SYMBOLS_GROWTH``: an outline that follows a card's print
        more than its edge cuts through the symbols it should hold. So too where a cut card
        was completed from halves of its symbols (``TURNED_HALF``): grown, its symbols may show
        whole, and it is read from those where they do; and where a symbol is cut by the
        outline's end (``grown_past_a_cut_symbol``). A card taken for one partly covered
        whose symbols its outline does not hold whole is measured on its ``uncovered`` outline
        (``Found.uncovered``) where there is one, still as partly covered: read only where its
        symbols show whole there (or from its whole end)."""
        measured = self.measure_outline(image, outline)
        if isinstance(measured, MeasuredCard) and measured.features.values.get("cut_at_end"):
            measured = self.grown_past_a_cut_symbol(image, measured)
        covered = isinstance(measured, Ignored) and measured.reason == PARTLY_COVERED
        if covered and uncovered is not None:
            again = self.measure_outline(image, replace(uncovered, occluded=True))
            return again if isinstance(again, MeasuredCard) else measured
        turned = isinstance(measured, MeasuredCard) and measured.features.values.get(TURNED_HALF)
        if not turned and (not isinstance(measured, Ignored) or measured.reason != NO_SYMBOLS):
            return measured
        again = self.measure_outline(image, _grown(outline, image))
        if not isinstance(again, MeasuredCard):
            return measured
        return measured if turned and again.features.values.get(TURNED_HALF) else again

    def grown_past_a_cut_symbol(self, image: np.ndarray, measured: MeasuredCard) -> MeasuredCard:
        """A card found with a symbol cut by its outline's end, measured once more on the
        outline grown by ``NO_SYMBOLS_GROWTH``: an outline that falls short of the card's end
        cuts its last symbol, and the number is then in doubt. The grown outline is taken where
        it holds more symbols and none cut. Not a card cut by the image's border or partly
        covered (their outline ends where the card is hidden)."""
        outline = measured.outline
        if outline.touches_border or outline.occluded:
            return measured
        again = self.measure_outline(image, _grown(outline, image))
        if not isinstance(again, MeasuredCard) or again.features.values.get("cut_at_end"):
            return measured
        return again if len(again.features.symbols) > len(measured.features.symbols) else measured

    @staticmethod
    def measure_outline(
        image: np.ndarray, outline: Outline, complete_cut: bool = True
    ) -> MeasuredCard | Ignored:
        """Measure one outline of a BGR image, or say why it cannot be read as a card.

        ``complete_cut``: a card cut by the image's edge is judged, and read, completed (see
        ``cut_cards``), and one partly under another card is read from its whole end
        (``covered_at_one_end``); without, only as far as the image shows it, and only where
        its symbols stand whole in its outline (training: a completed card's part beyond the
        image is no real pixels, and an outline running on under another card no card's)."""
        card, features, _ = _laid_out(image, outline.corners_xy, outline.long_side)
        size = (card.shape[1], card.shape[0])
        if not features.symbols and not outline.touches_border:
            return Ignored(outline.corners_xy, NO_SYMBOLS)
        if outline.touches_border:
            # judged whole where it can be: the part shown may look complete by chance, or
            # hold no symbol inside its margins when cut along its length close to them
            part_reads = bool(features.symbols) and symbols_complete(features, size)
            whole = _whole(image, outline, card, part_reads) if complete_cut else None
            if isinstance(whole, Ignored):
                return whole
            if whole is None and complete_cut and not part_reads:
                whole = _corner_cut(image, outline, card)
            if whole is not None:
                features = whole
            elif not features.symbols:
                return Ignored(outline.corners_xy, NO_SYMBOLS)
            elif not part_reads:
                return Ignored(outline.corners_xy, CUT_BY_BORDER)
        if outline.occluded and not symbols_complete(features, size):
            if not (complete_cut and covered_at_one_end(features, size)):
                return Ignored(outline.corners_xy, PARTLY_COVERED)
            features.values[COVERED_AT_END] = 1.0
        return MeasuredCard(outline, features, margin=margin_texture(card))

    def read_unsure_again(
        self, image: np.ndarray, measured: list[MeasuredCard]
    ) -> list[MeasuredCard]:
        """The ``measured`` outlines, each that would be set aside (``set_aside``) replaced by
        its ``surest_variant`` where it has one, keeping the finder's probability: an outline a
        little off its card, or turned from it, reads unsurely, as a net's place does. Not an
        outline cut by the image's border: a cut card's number is told from its margins, which
        a variant moves."""
        if not any(set_aside(m.found_probability, 0.0, m.margin) for m in measured):
            return measured  # none would be set aside, however unsurely it read
        again = list(measured)
        for k, (card, reading) in enumerate(zip(measured, self.classify(measured))):
            if worth_reading_again(
                card.outline, card.found_probability, reading.confidence, card.margin
            ):
                variant = self.surest_variant(image, card.outline, reading.confidence)
                if variant is not None:
                    again[k] = replace(variant, found_probability=card.found_probability)
        return again

    def surest_variant(
        self, image: np.ndarray, outline: Outline, confidence: float
    ) -> MeasuredCard | None:
        """Of the variants of an ``outline`` read with ``confidence`` (``read_variants``), the
        one that reads surest alone, where it reads as a card (``RESCUE_CONFIDENCE``)."""
        readings = self.read_variants(image, outline, confidence)
        best = best_reading([confidence, *(alone for alone, _ in readings)])
        return readings[best - 1][1] if best else None  # 0: the outline's own, not a variant

    def classify_vetted(
        self, measured: list[MeasuredCard]
    ) -> tuple[list[CardReading], list[Ignored]]:
        """The cards read, less those found unsurely and read with little confidence
        (``set_aside``): those come back as card-like shapes (``UNSURE``), and the rest are
        read again without them, since a deck's cards are settled together."""
        readings = self.classify(measured)
        aside = [
            set_aside(m.found_probability, r.confidence, m.margin)
            for m, r in zip(measured, readings)
        ]
        if not any(aside):
            return readings, []
        unsure = [Ignored(m.outline.corners_xy, UNSURE) for m, a in zip(measured, aside) if a]
        return self.classify([m for m, a in zip(measured, aside) if not a]), unsure

    def classify(self, measured: list[MeasuredCard]) -> list[CardReading]:
        """Attribute probabilities, calibration, and identities settled across the layout."""
        features = [m.features for m in measured]
        probabilities = self.models.predict(features)
        if self.adjust is not None and features:
            probabilities = self.adjust(features, probabilities)
        probabilities = known_numbers(features, probabilities)
        cards = settle(probabilities) if features else []
        probabilities = doubt_symbols_beyond(features, probabilities)  # the reading stays
        probabilities = doubt_turned_shapes(features, probabilities)
        return [
            CardReading(
                m.outline.corners_xy,
                {a: np.asarray(probabilities[a][i], dtype=np.float64) for a in ATTRIBUTES},
                cards[i],
            )
            for i, m in enumerate(measured)
        ]

    def read(
        self,
        image: np.ndarray,
        scale: float = 1.0,
        image_size=None,
        warnings: tuple[str, ...] = (),
    ) -> Layout:
        """Read every card of an image; ``scale`` maps its pixels to the original photo's.

        ``warnings`` (from decoding: the picture may be partly garbage) keep the verdict from
        ``no_set``."""
        image = as_bgr(image)
        total = time.perf_counter()
        measured, ignored, timings, possible = self.measure(image)
        start = time.perf_counter()
        measured = self.read_unsure_again(image, measured)
        timings["measure"] = timings.get("measure", 0.0) + (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        readings, unsure = self.classify_vetted(measured)
        ignored += unsure
        timings["classify"] = (time.perf_counter() - start) * 1000
        order = reading_order([r.corners_xy for r in readings])
        readings = [readings[i] for i in order]
        timings["total"] = (time.perf_counter() - total) * 1000
        size = (image.shape[1], image.shape[0])
        layout = Layout(size, tuple(readings), tuple(ignored), timings, tuple(possible), warnings)
        layout = layout.scaled(scale)
        if image_size is not None:
            layout = replace(layout, image_size=tuple(image_size))
        return layout

    def read_photo(self, photo: Photo) -> Layout:
        return self.read(photo.image, photo.scale, photo.size, photo.warnings)
