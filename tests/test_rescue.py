"""Places the card net sees and no candidate outlines: counted as cards when they read surely,
left as places where a card may be missed when they do not (real photos)."""

from __future__ import annotations

import numpy as np
from setvision.vision.find.finder import find_cards, net_places, place_outline
from setvision.vision.geometry import convex_iou, scaled_about_centre, turned_about_centre
from setvision.vision.learn.find_training import HeldOutOutlines
from setvision.vision.learn.vetting_eval import read_found
from setvision.vision.read.rescue import (
    RESCUE_CONFIDENCE,
    RESCUE_LEVELS,
    best_reading,
    outline_variants,
    worth_retrying,
)

#: The bag's banana print that a finder fitted without this source took for a card (corners in
#: the photo's pixels as loaded; see ``test_vetting.py``).
BAG = "boards/TheBananaBender__Set_vision_player/train__photo_49_2025-06-15_12-18-12.jpg"
PRINT = np.array([[163, 76], [363, 53], [365, 224], [142, 245]], np.float32)


def _best_overlap(quad: np.ndarray, quads: list[np.ndarray]) -> float:
    return max((convex_iou(np.float64(quad), np.float64(q)) for q in quads), default=0.0)


def _size(image: np.ndarray) -> tuple[int, int]:
    return image.shape[1], image.shape[0]


def test_a_card_no_candidate_outlines_is_read_from_the_nets_place(reader, shelf, shelf_truth):
    found = find_cards(shelf.image)
    labelled = [np.asarray(p, np.float32) / shelf.scale for p in shelf_truth.polygons]
    found_quads = [o.corners_xy for o in found.outlines]
    missed = [p for p in labelled if _best_overlap(p, found_quads) < 0.5]
    assert len(missed) == 1 and len(found.outlines) == len(labelled) - 1
    assert _best_overlap(missed[0], [p.corners_xy for p in found.net_places]) >= 0.5

    layout = reader.read(shelf.image)
    read = [c.corners_xy for c in layout.cards]
    assert len(read) == len(labelled)
    assert all(_best_overlap(p, read) >= 0.5 for p in labelled)
    assert not layout.possible  # its place is a card now, no longer a doubt


def test_a_print_the_net_might_see_is_not_taken_and_stays_a_doubt(reader, photo, data_dir):
    bag = photo(data_dir / BAG)
    place = place_outline(PRINT, _size(bag.image), 2.0)
    assert reader.rescue(bag.image, [place], min(RESCUE_LEVELS)) == []


def test_a_coarse_place_on_a_card_is_taken(reader, shelf):
    """The net's outlines are coarse: a card's outline grown by a tenth and turned 4 degrees
    still reads as that card."""
    card = find_cards(shelf.image).outlines[0].corners_xy
    coarse = scaled_about_centre(turned_about_centre(card, 4.0), 1.1)
    taken = reader.rescue(shelf.image, [place_outline(coarse, _size(shelf.image), 2.0)])
    assert len(taken) == 1 and taken[0].found_probability == 0.0


def test_held_out_reading_counts_the_nets_place_from_its_level(reader, shelf, shelf_truth):
    found = find_cards(shelf.image)
    outlines = HeldOutOutlines(
        shelf_truth.file,
        tuple(o.corners_xy * shelf.scale for o in found.outlines),
        tuple(found.probabilities),
        tuple(p.corners_xy * shelf.scale for p in found.net_places),
        snap_reach=4.0,
    )
    read = read_found(shelf_truth, shelf.image, shelf.scale, outlines, reader)
    labelled = len(shelf_truth.polygons)
    assert read.rescued[max(RESCUE_LEVELS)] == (labelled - 1, 0)  # none rescued
    assert read.rescued[RESCUE_CONFIDENCE] == (labelled, 0)
    assert read.result_rescued(RESCUE_CONFIDENCE).complete


def _square(x: float, y: float, side: float = 10.0) -> np.ndarray:
    return np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]], np.float32)


def test_net_places_leave_out_the_cards_and_prefer_a_doubts_outline():
    card, doubt = _square(0, 0), _square(100, 0)
    on_card, on_doubt, again, alone = (
        _square(1, 1),
        _square(102, 1),
        _square(99, 2),
        _square(300, 0),
    )
    places = net_places([on_card, on_doubt, again, alone], np.array([card]), np.array([doubt]))
    assert len(places) == 2  # the card's is explained; the doubt is read once, for both
    assert np.array_equal(places[0], doubt) and np.array_equal(places[1], alone)


def test_a_place_counts_on_its_own_outline_first_else_on_its_surest_variant():
    assert best_reading([0.8, 0.95, 0.2]) == 0  # sure enough: the outline itself
    assert best_reading([0.5, 0.6, 0.9]) == 2
    assert best_reading([0.5, 0.6, 0.65]) is None
    assert best_reading([]) is None
    assert worth_retrying(0.5) and not worth_retrying(0.1) and not worth_retrying(0.9)


def test_an_outline_variant_is_shrunk_about_the_centre():
    blank = np.full((40, 40, 3), 128, np.uint8)  # nothing to outline the place from again
    (shrunk,) = outline_variants(blank, _square(0, 0, 10), 0.5)
    assert np.allclose(shrunk[0], [0.5, 0.5]) and np.allclose(shrunk[2], [9.5, 9.5])


def _measured(reader, image: np.ndarray, corners: np.ndarray, found: float):
    from dataclasses import replace

    from setvision.vision.pipeline import MeasuredCard

    measured = reader.measure_outline(image, place_outline(corners, _size(image), 2.0))
    if not isinstance(measured, MeasuredCard):
        return None
    return replace(measured, found_probability=found)


def test_an_outline_set_aside_is_read_again_on_its_variants(reader, shelf):
    """Outlines found unsurely and turned and moved off their cards read too unsurely to count;
    read again, a variant that follows the card counts (the finder's probability kept)."""
    from setvision.vision.read.vetting import set_aside

    replaced = 0
    for outline in find_cards(shelf.image).outlines:
        card = outline.corners_xy
        moved = turned_about_centre(card, 10.0) + 0.15 * (card[1] - card[0])
        measured = _measured(reader, shelf.image, moved, found=0.5)
        if measured is None:
            continue
        confidence = reader.classify([measured])[0].confidence
        again = reader.read_unsure_again(shelf.image, [measured])[0]
        if not set_aside(0.5, confidence, measured.margin):
            assert again is measured  # only what would be set aside is read again
            continue
        if again is measured:
            continue  # no variant reads surely: it stays set aside
        replaced += 1
        assert again.found_probability == 0.5
        assert convex_iou(np.float64(again.outline.corners_xy), np.float64(card)) >= 0.8
        assert reader.classify([again])[0].confidence >= RESCUE_CONFIDENCE
    assert replaced >= 2


def test_an_outline_cut_by_the_border_is_not_read_again(reader, shelf):
    """A cut card's number is told from its margins, which a variant moves: an outline that
    touches the border stays set aside though a variant of it would read surely."""
    from dataclasses import replace

    for outline in find_cards(shelf.image).outlines:
        card = outline.corners_xy
        moved = turned_about_centre(card, 10.0) + 0.15 * (card[1] - card[0])
        measured = _measured(reader, shelf.image, moved, found=0.5)
        if measured is None or reader.read_unsure_again(shelf.image, [measured])[0] is measured:
            continue
        cut = replace(measured, outline=replace(measured.outline, touches_border=True))
        assert reader.read_unsure_again(shelf.image, [cut])[0] is cut
        return
    raise AssertionError("no outline of the shelf is read again")


def test_a_print_set_aside_is_not_read_again_into_a_card(reader, photo, data_dir):
    bag = photo(data_dir / BAG)
    measured = _measured(reader, bag.image, PRINT, found=0.5)
    assert measured is not None
    assert reader.read_unsure_again(bag.image, [measured])[0] is measured


def test_sure_outlines_are_not_read_again(reader, shelf):
    outlines = find_cards(shelf.image).outlines
    measured = [_measured(reader, shelf.image, o.corners_xy, found=1.0) for o in outlines]
    measured = [m for m in measured if m is not None]
    again = reader.read_unsure_again(shelf.image, measured)
    assert len(again) == len(measured) and all(a is m for a, m in zip(again, measured))
