"""An outline found that holds no symbols, or cuts a symbol at its end, is measured once more,
grown: a candidate that follows a card's print more than its edge, or falls short of the card's
end, cuts through the symbols it should hold."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from setvision.vision.geometry import scaled_about_centre
from setvision.vision.layout import NO_SYMBOLS, Ignored
from setvision.vision.pipeline import MeasuredCard

#: Each whole card's outline shrunk to this share about its centre: it then cuts through the
#: symbols of some cards (their ends touch its sides) and not of others.
TOO_TIGHT = 1 / 1.25


def test_an_outline_cutting_through_its_symbols_is_read_grown(reader, placed_cards):
    cut_through, read_grown = 0, []
    for image, outline, labelled in placed_cards():
        tight = replace(outline, corners_xy=scaled_about_centre(outline.corners_xy, TOO_TIGHT))
        measured = reader.measure_outline(image, tight)
        if not (isinstance(measured, Ignored) and measured.reason == NO_SYMBOLS):
            continue
        cut_through += 1
        found = reader.measure_found(image, tight)
        if isinstance(found, MeasuredCard):
            read_grown.append((str(reader.classify([found])[0].card), str(labelled.card)))
    assert cut_through >= 5  # 8 of the six sources' whole cards
    assert len(read_grown) == cut_through
    assert all(read == label for read, label in read_grown)


def test_an_outline_with_symbols_is_measured_as_it_is(reader, placed_cards):
    image, outline, _ = placed_cards()[0]
    found = reader.measure_found(image, outline)
    assert isinstance(found, MeasuredCard)
    assert (found.outline.corners_xy == outline.corners_xy).all()


#: A whole card's outline shortened at its far end by this share of its length: on some cards
#: it then cuts the last symbol.
SHORT_BY = 0.08


def _short_at_one_end(outline):
    corners = np.roll(outline.corners_xy, -outline.long_side, axis=0)  # sides 0-1, 2-3 long
    corners[1] = corners[0] + (1 - SHORT_BY) * (corners[1] - corners[0])
    corners[2] = corners[3] + (1 - SHORT_BY) * (corners[2] - corners[3])
    return replace(outline, corners_xy=np.roll(corners, outline.long_side, axis=0))


def test_an_outline_short_of_its_cards_end_is_read_grown_past_the_cut_symbol(reader, placed_cards):
    """Cut at the end, the last symbol puts the number in doubt; grown, the outline holds it
    whole, and the card reads as itself, more surely."""
    cut, grown, right, sure_cut, sure_grown = 0, 0, 0, 0.0, 0.0
    for image, outline, labelled in placed_cards():
        short = _short_at_one_end(outline)
        measured = reader.measure_outline(image, short)
        if not isinstance(measured, MeasuredCard) or not measured.features.values["cut_at_end"]:
            continue
        cut += 1
        found = reader.measure_found(image, short)
        grown += len(found.features.symbols) > len(measured.features.symbols)
        as_cut, as_found = reader.classify([measured])[0], reader.classify([found])[0]
        right += str(as_found.card) == str(labelled.card)
        sure_cut, sure_grown = sure_cut + as_cut.confidence, sure_grown + as_found.confidence
    assert cut >= 10  # 16 of the six sources' whole cards
    assert grown >= cut // 2 and right == cut
    assert sure_grown > sure_cut
