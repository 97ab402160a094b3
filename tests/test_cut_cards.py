"""Cards cut by the photo's edge: read when every symbol shows, completed to their whole
outline, or when two whole symbols at a three's margin tell a three; left out when a symbol
may lie beyond the edge."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from conftest import symbol_box
from setvision.vision.find.finder import find_cards
from setvision.vision.find.outlines import Outline
from setvision.vision.pipeline import CardReader, MeasuredCard, _laid_out
from setvision.vision.read.cut_cards import (
    KNOWN_NUMBER,
    MARGIN_TO_SYMBOL,
    card_frame,
    count_by_margin,
    count_past_edge,
    cut_side,
    known_numbers,
    row_past_edge,
    shown_lengthwise,
    symbol_beyond_row,
)
from setvision.vision.read.features import CardFeatures

#: Eight cards on black cloth; two cut by the photo's edge show all their symbols (labelled),
#: a third shows only part of its symbol (labelled partial).
CLOTH = "boards/jtclark2__card_shark/ImageLibrary__IMG_6439.jpg"


def _view(perspective: bool) -> np.ndarray:
    """A view of a table (inches) in a 400 x 300 photo: turned and slanted, or also in
    perspective."""
    table = np.float32([[0, 0], [12, 0], [12, 9], [0, 9]])
    if perspective:
        photo = np.float32([[40, 30], [420, 60], [380, 330], [10, 280]])
    else:
        photo = np.float32([[40, 30], [420, 60], [390, 305], [10, 275]])
    return cv2.getPerspectiveTransform(table, photo)


def _on_photo(matrix: np.ndarray, corners) -> np.ndarray:
    return cv2.perspectiveTransform(np.float32(corners).reshape(-1, 1, 2), matrix).reshape(-1, 2)


@pytest.mark.parametrize("perspective, tolerance", [(False, 0.01), (True, 3.0)])
def test_a_card_cut_by_the_edge_is_completed(perspective, tolerance):
    matrix = _view(perspective)
    # a card lying along the table from x = 9.6 inches, turned a little: the photo's right
    # edge (x = 399 pixels) cuts it at a slant
    turn = np.radians(8)
    length, width = (
        3.5 * np.array([np.cos(turn), np.sin(turn)]),
        2.25 * np.array([-np.sin(turn), np.cos(turn)]),
    )
    start = np.array([9.6, 4.5])
    on_table = [start, start + length, start + length + width, start + width]
    whole = _on_photo(matrix, on_table)
    cut = [p + (399.0 - p[0]) / (q[0] - p[0]) * (q - p)
           for p, q in ((whole[0], whole[1]), (whole[3], whole[2]))]  # fmt: skip
    shown = np.float32([whole[0], cut[0], cut[1], whole[3]])
    assert (whole[1:3, 0] > 400).all() and abs(cut[0][0] - 399) < 1e-3
    side = cut_side(shown, (400, 300))
    assert side == 1
    lengthwise = shown_lengthwise(shown, side)
    # clockwise from the whole side: along the card, across the cut, back, the whole side
    np.testing.assert_allclose(lengthwise, shown[[0, 1, 2, 3]])
    reach = float(np.linalg.norm(whole[1] - whole[0]))
    np.testing.assert_allclose(card_frame(lengthwise, reach), whole, atol=tolerance)
    # the part shown reaches as far as its longer side along the card
    shown_reach = np.linalg.norm(card_frame(lengthwise)[1] - card_frame(lengthwise)[0])
    assert shown_reach == pytest.approx(
        max(np.linalg.norm(cut[0] - whole[0]), np.linalg.norm(cut[1] - whole[3])), rel=0.02
    )


def test_only_a_part_cut_along_one_side_is_a_cut_card():
    inside = _on_photo(_view(True), [[5, 5], [8.5, 5], [8.5, 7.25], [5, 7.25]])
    assert cut_side(inside, (400, 300)) is None
    corner = np.float32([[0, 0], [60, 0], [60, 40], [0, 40]])  # cut at a corner: two sides
    assert cut_side(corner, (400, 300)) is None


def test_the_margin_beside_the_symbols_tells_their_number():
    for count, ratio in MARGIN_TO_SYMBOL.items():
        assert count_by_margin(ratio * 0.2, 0.2) == count
    # two ovals left of three: the margin is a three-symbol card's, not a two's
    assert count_by_margin(0.11, 0.21) == 3
    assert count_by_margin(0.39, 0.21) == 1
    # a margin of five symbol widths, or none, is no card's: its side is not the card's edge
    assert count_by_margin(1.0, 0.2) is None
    assert count_by_margin(0.0, 0.2) is None


@pytest.fixture(scope="module")
def cloth(photo, data_dir):
    return photo(data_dir / CLOTH).image


def test_cards_cut_by_the_edge_with_every_symbol_shown_are_read(reader, cloth, boards):
    layout = reader.read(cloth)
    labelled = boards[CLOTH]
    read = {}
    for labelled_card in labelled.cards:
        centre = np.float32(labelled_card.centre)
        for card in layout.cards:
            if (
                cv2.pointPolygonTest(np.float32(card.corners_xy), tuple(map(float, centre)), False)
                >= 0
            ):
                read[labelled_card.card] = card.card
    assert len(read) == len(labelled.cards) == 8
    assert all(truth == found for truth, found in read.items())
    cut = [
        c for c in layout.cards if c.corners_xy[:, 1].min() < 3 or c.corners_xy[:, 1].max() > 1396
    ]
    assert {str(c.card) for c in cut} >= {"2-green-solid-oval", "1-green-solid-diamond"}
    # completed from their margins, which a misplaced outline can misread: never read surely
    assert not any(c.confident for c in cut)


def _symbol_rows(
    image: np.ndarray, label: str, reader, axis: int = 1
) -> tuple[np.ndarray, list[tuple]]:
    """The outline of the card read as ``label`` and its symbols' rows (top, bottom) in the
    photo's pixels, top first (``axis`` 0: their columns, left first)."""
    layout = reader.read(image)
    card = next(c for c in layout.cards if str(c.card) == label)
    outline = next(
        o for o in find_cards(image).outlines if np.abs(o.corners_xy - card.corners_xy).max() < 1
    )
    laid_card, features, laid = _laid_out(image, outline.corners_xy, outline.long_side)
    height, width = laid_card.shape[:2]
    square = np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])
    to_image = cv2.getPerspectiveTransform(square, np.float32(laid))
    rows = []
    for contour in features.symbols:
        points = cv2.perspectiveTransform(contour.reshape(-1, 1, 2).astype(np.float32), to_image)
        rows.append((float(points[..., axis].min()), float(points[..., axis].max())))
    return card.corners_xy, sorted(rows)


def _cut_at(reader, image: np.ndarray, row: int, corners: np.ndarray) -> tuple[list, list]:
    """The photo cut at ``row`` across the card at ``corners``: the cards ``reader`` reads
    there, and the outlines left out there."""
    layout = reader.read(np.ascontiguousarray(image[:row]))
    low, high = corners[:, 0].min(), corners[:, 0].max()

    def there(quad: np.ndarray) -> bool:
        return quad[:, 1].max() >= row - 3 and low <= quad[:, 0].mean() <= high

    return [c for c in layout.cards if there(c.corners_xy)], [
        i for i in layout.ignored if there(i.corners_xy)
    ]


def test_a_card_whose_third_symbol_lies_beyond_the_edge_reads_three(reader, cloth):
    corners, rows = _symbol_rows(cloth, "3-green-solid-oval", reader)
    assert len(rows) == 3
    # the photo cut between the card's second and third symbol: two whole ovals show, at a
    # three's margin from the card's whole end
    shown, _ = _cut_at(reader, cloth, int(round((rows[1][1] + rows[2][0]) / 2)), corners)
    assert [str(c.card) for c in shown] == ["3-green-solid-oval"]
    assert shown[0].probabilities["number"][2] == 1.0
    # cut through the third oval: it is seen cut, the two whole ones are read
    shown, _ = _cut_at(reader, cloth, int(round((rows[2][0] + rows[2][1]) / 2)), corners)
    assert [str(c.card) for c in shown] == ["3-green-solid-oval"]


def test_a_card_showing_one_whole_symbol_reads_by_its_margin(reader, cloth):
    corners, rows = _symbol_rows(cloth, "3-green-solid-oval", reader)
    # cut through the second oval: one whole oval at a three's margin, then one cut
    shown, _ = _cut_at(reader, cloth, int(round((rows[1][0] + rows[1][1]) / 2)), corners)
    assert [str(c.card) for c in shown] == ["3-green-solid-oval"]
    assert shown[0].probabilities["number"][2] == 1.0
    corners, rows = _symbol_rows(cloth, "2-green-solid-squiggle", reader)
    assert len(rows) == 2
    # cut through the second squiggle: one whole at a two's margin, the second seen cut; a
    # three cut after its first symbol can measure a two's margin, so never surely
    shown, _ = _cut_at(reader, cloth, int(round((rows[1][0] + rows[1][1]) / 2)), corners)
    assert [str(c.card) for c in shown] == ["2-green-solid-squiggle"]
    assert 0.5 < shown[0].probabilities["number"][1] < 1.0
    assert not shown[0].confident


@pytest.mark.parametrize("share", [0.1, 0.15, 0.2])
def test_a_sliver_of_the_second_symbol_at_the_edge_tells_a_two(reader, cloth, share):
    corners, rows = _symbol_rows(cloth, "2-green-solid-squiggle", reader)
    # the photo cut just into the second squiggle: a sliver too thin to read as a symbol
    # (before: left out, a symbol may lie beyond); the ink at the edge shows it cut there
    second = rows[1]
    row = int(round(second[0] + share * (second[1] - second[0])))
    shown, _ = _cut_at(reader, cloth, row, corners)
    assert [str(c.card) for c in shown] == ["2-green-solid-squiggle"]
    # a two told from one whole symbol: a three cut after its first may look so
    assert not shown[0].confident


@pytest.mark.parametrize("label", ["2-green-solid-diamond", "2-green-solid-squiggle"])
def test_a_card_cut_across_its_middle_is_completed_turned_half_round(reader, cloth, label):
    card = next(c for c in reader.read(cloth).cards if str(c.card) == label)
    top, bottom = card.corners_xy[:, 1].min(), card.corners_xy[:, 1].max()
    # the photo cut at 0.55 of the card's length, just past its second symbol's start: no
    # margin tells its number (before: left out); turned half round, the half shown covers
    # the half hidden, and the card reads, its number and shape never surely
    shown, _ = _cut_at(reader, cloth, int(round(top + 0.55 * (bottom - top))), card.corners_xy)
    assert [str(c.card) for c in shown] == [label]
    assert not shown[0].confident


@pytest.mark.parametrize(
    "label", ["1-green-solid-oval", "1-green-solid-squiggle", "1-green-solid-diamond"]
)
@pytest.mark.parametrize("share", [0.6, 0.65])
def test_a_card_cut_across_through_its_only_symbol_is_completed_turned_half_round(
    reader, cloth, label, share
):
    card = next(c for c in reader.read(cloth).cards if str(c.card) == label)
    top, bottom = card.corners_xy[:, 1].min(), card.corners_xy[:, 1].max()
    # cut through its one symbol: no whole symbol shows to tell the card's direction by (before:
    # left out at 0.6 or 0.65); turned half round, it reads, never surely
    row = int(round(top + share * (bottom - top)))
    shown, _ = _cut_at(reader, cloth, row, card.corners_xy)
    assert [str(c.card) for c in shown] == [label]
    assert not shown[0].confident


def _cut_along(reader, image: np.ndarray, column: int, corners: np.ndarray) -> list:
    """The cards ``reader`` reads at the card at ``corners`` in the photo cut at ``column``."""
    layout = reader.read(np.ascontiguousarray(image[:, :column]))
    low, high = corners[:, 1].min(), corners[:, 1].max()
    return [
        c
        for c in layout.cards
        if c.corners_xy[:, 0].max() >= column - 3 and low <= c.corners_xy[:, 1].mean() <= high
    ]


def test_a_card_cut_along_its_length_reads_from_its_whole_row(reader, cloth):
    corners, columns = _symbol_rows(cloth, "3-green-solid-oval", reader, axis=0)
    assert len(columns) == 3 and corners[:, 0].max() > columns[0][1] + 10
    # the photo's right edge cut along the card between its ovals' ends and its own edge: the
    # row runs the whole card, so no symbol lies beyond, and the ovals show whole
    shown = _cut_along(reader, cloth, int(round(max(r for _, r in columns) + 5)), corners)
    assert [str(c.card) for c in shown] == ["3-green-solid-oval"]
    assert shown[0].confident
    # cut through the ovals: every symbol is cut, and the card is not read
    assert _cut_along(reader, cloth, int(round(np.mean(columns[0]))), corners) == []


def test_a_card_cut_along_through_every_symbol_is_completed_turned_half_round(reader, cloth):
    corners, _ = _symbol_rows(cloth, "3-green-solid-oval", reader, axis=0)
    left, right = corners[:, 0].min(), corners[:, 0].max()

    def cut_at(share: float) -> list:
        return _cut_along(reader, cloth, int(round(left + share * (right - left))), corners)

    # past its middle, what the edge hides is what shows turned half round: read, never surely
    for share in (0.65, 0.75):
        shown = cut_at(share)
        assert [str(c.card) for c in shown] == ["3-green-solid-oval"]
        assert not shown[0].confident and shown[0].probabilities["shape"].max() <= 0.8
    # up to about half its width, nothing past the middle shows to turn: not read
    assert cut_at(0.5) == []


def test_a_cut_card_outlined_short_of_a_symbol_is_not_read_surely(reader, cloth):
    corners, columns = _symbol_rows(cloth, "3-green-solid-oval", reader, axis=0)
    _, rows = _symbol_rows(cloth, "3-green-solid-oval", reader, axis=1)
    column = int(round(max(right for _, right in columns) + 5))
    image = np.ascontiguousarray(cloth[:, :column])
    left, top, bottom = corners[:, 0].min(), corners[:, 1].min(), corners[:, 1].max()

    def measured(start: float) -> MeasuredCard:
        right = column - 1
        quad = np.float32([[left, start], [right, start], [right, bottom], [left, bottom]])
        measured = reader.measure_outline(image, Outline(quad, touches_border=True))
        assert isinstance(measured, MeasuredCard)
        return measured

    whole = reader.classify([measured(top)])[0]
    assert str(whole.card) == "3-green-solid-oval" and whole.confident
    # cut along its length and outlined from just past its first oval's end, as the finder may
    # outline a cut card round two of its symbols: read as two, a third likely beyond
    for start in (rows[0][1], rows[0][1] + 4):
        short = measured(start)
        assert short.features.values["cut_at_end"]
        reading = reader.classify([short])[0]
        assert reading.card.number == 2 and reading.probabilities["number"][2] >= 0.25


def test_a_symbol_at_the_rows_spacing_past_the_outline_runs_the_row_on():
    span, width, margin = (110.0, 240.0), 350, 20.0
    row = [symbol_box(130), symbol_box(190)]  # 30 wide, a gap of 30 between them
    assert not symbol_beyond_row(row, span, width, margin)
    assert symbol_beyond_row(row + [symbol_box(232)], span, width, margin)  # gap 11 after
    assert symbol_beyond_row(row + [symbol_box(88)], span, width, margin)  # gap 11 before
    # a neighbour's symbol stands further off; one cut by the view's end, or of another
    # width, is no symbol of this row
    assert not symbol_beyond_row(row + [symbol_box(250)], span, width, margin)
    assert not symbol_beyond_row(row + [symbol_box(232, width=60)], span, width, margin)
    assert not symbol_beyond_row(row + [symbol_box(232)], span, 270, margin)


def test_two_whole_symbols_at_a_threes_margin_are_a_three():
    # a three's margin is about 0.55 symbol widths, a two's 1.19; the gap a third of a symbol
    assert count_past_edge([symbol_box(16), symbol_box(56)], [], 120) == 3
    # the third symbol seen cut by the edge allows a margin up to the two's (not beyond it)
    assert count_past_edge([symbol_box(22), symbol_box(62)], [], 120) is None
    assert count_past_edge([symbol_box(22), symbol_box(62)], [symbol_box(102, 18)], 120) == 3
    assert count_past_edge([symbol_box(36), symbol_box(76)], [symbol_box(116, 4)], 120) is None
    # a third symbol would show whole before the edge, and none is there: not known
    assert count_past_edge([symbol_box(16), symbol_box(56)], [], 160) is None
    # symbols unlike or far apart, or a cut one before the second: not known
    assert count_past_edge([symbol_box(16), symbol_box(56, 50)], [], 120) is None
    assert count_past_edge([symbol_box(16), symbol_box(86)], [], 140) is None
    assert count_past_edge([symbol_box(16), symbol_box(56)], [symbol_box(40, 5)], 120) is None


def test_a_third_symbol_seen_at_the_edge_where_it_would_stand_makes_a_three():
    # the third would show whole before the edge, but it is seen touching the edge (it may be
    # cut): no card holds more than three, so it is a three all the same
    assert count_past_edge([symbol_box(16), symbol_box(56)], [symbol_box(96, 28)], 160) == 3
    # something at the edge beyond where a third would stand proves nothing
    assert count_past_edge([symbol_box(16), symbol_box(56)], [symbol_box(130, 20)], 200) is None


def test_one_whole_symbol_tells_a_three_by_its_margin_and_a_two_by_the_next_seen_cut():
    # a three's margin (0.53 symbol widths), the next symbol beyond the edge: a three
    assert count_past_edge([symbol_box(16)], [], 60) == 3
    # a two's margin (1.2) tells a two only where the second symbol is seen cut, or ink is
    assert count_past_edge([symbol_box(36)], [symbol_box(75, 10)], 85) == 2
    assert count_past_edge([symbol_box(36)], [], 85, ink_at_end=True) == 2
    assert count_past_edge([symbol_box(36)], [], 85) is None
    # a two told from one symbol is not sure (a three cut after its first may look so)
    assert not row_past_edge([symbol_box(36)], [symbol_box(75, 10)], 85).sure()
    assert row_past_edge([symbol_box(16)], [], 60).sure()
    # a margin between a three's and a two's, or a one's, tells no number past the edge
    assert count_past_edge([symbol_box(24)], [symbol_box(64, 10)], 74) is None
    assert count_past_edge([symbol_box(55)], [symbol_box(95, 10)], 105) is None
    # a second symbol would show whole before the edge, and none is there: not known
    assert count_past_edge([symbol_box(16)], [], 120) is None


def test_ink_cut_by_the_end_counts_as_a_third_symbol_seen():
    # an open symbol cut by the edge leaves arcs, no closed symbol: the ink reaching the card's
    # cut end is what shows it, and allows a margin up to the two's as a symbol seen cut does
    assert count_past_edge([symbol_box(22), symbol_box(62)], [], 120) is None
    assert count_past_edge([symbol_box(22), symbol_box(62)], [], 120, ink_at_end=True) == 3
    assert count_past_edge([symbol_box(36), symbol_box(76)], [], 120, ink_at_end=True) is None
    # a third would show whole before the edge: ink at the end is no third symbol
    assert count_past_edge([symbol_box(22), symbol_box(62)], [], 200, ink_at_end=True) is None


def test_a_known_number_is_certain():
    features = [CardFeatures({KNOWN_NUMBER: 3.0}), CardFeatures({})]
    unsure = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]])
    number = known_numbers(features, {"number": unsure})["number"]
    np.testing.assert_array_equal(number, [[0, 0, 1], [0.5, 0.3, 0.2]])


def test_a_card_cut_in_its_margin_reads_whole(reader, cloth):
    corners, rows = _symbol_rows(cloth, "3-green-solid-squiggle", reader)
    assert len(rows) == 3
    # the photo cut between the card's last symbol and its edge
    cut = int(round((rows[2][1] + corners[:, 1].max()) / 2)) + 1
    assert cut < corners[:, 1].max() - 3
    layout = reader.read(np.ascontiguousarray(cloth[:cut]))
    assert "3-green-solid-squiggle" in [str(c.card) for c in layout.cards]


def test_training_measures_a_cut_card_only_as_far_as_the_photo_shows(cloth):
    cut = [o for o in find_cards(cloth).outlines if o.touches_border]
    completed = [CardReader.measure_outline(cloth, o) for o in cut]
    shown = [CardReader.measure_outline(cloth, o, complete_cut=False) for o in cut]
    read = sum(isinstance(m, MeasuredCard) for m in completed)
    # all three cut cards read completed; as shown, those whose symbols the edge cuts do not
    # (one or two of them, as the outline along the edge falls a few pixels in or out)
    assert read == len(cut) == 3
    assert sum(isinstance(m, MeasuredCard) for m in shown) < read


#: Whole-table photos of six sources (decks, cameras, tables) whose cards are placed by label.
MARGIN_BOARDS = (
    "boards/Anaisdg__OpenCV/IMG_1821.jpg",
    "boards/antingshen__Set-Solver/training_raw__IMG_0574.jpg",
    "boards/nakkstar123__set-solver/grid__IMG_5809.jpg",
    "boards/piratefsh__set-solver/images__set-12-random-multi.jpg",
    "boards/robertdeleon98__SET_Solver/Test_Images__test1.jpg",
    "boards/tomwhite__set-game/data__webcam__20170604_134005.jpg",
)


def test_the_margin_rule_holds_on_whole_cards_of_other_decks(placed_cards):
    """The margins were measured on every source's whole cards; on these the rule must give
    each labelled card its number."""
    told, by_number = [], {1: [], 2: [], 3: []}
    for image, outline, labelled in placed_cards(MARGIN_BOARDS):
        if outline.occluded:
            continue
        card, features, _ = _laid_out(image, outline.corners_xy, outline.long_side)
        boxes = [cv2.boundingRect(c) for c in features.symbols]
        if len(boxes) != labelled.card.number:
            continue
        start = min(box[0] for box in boxes) / card.shape[1]
        width = float(np.median([box[2] for box in boxes])) / card.shape[1]
        told.append(count_by_margin(start, width) == len(boxes))
        by_number[len(boxes)].append(start / width)
    assert len(told) >= 60
    assert np.mean(told) >= 0.97
    for number, ratios in by_number.items():
        assert np.median(ratios) == pytest.approx(MARGIN_TO_SYMBOL[number], rel=0.2)
