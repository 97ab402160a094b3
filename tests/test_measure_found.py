"""An outline found that holds no symbols is measured once more, grown: a candidate that follows
a card's print more than its edge cuts through the symbols it should hold."""

from __future__ import annotations

from dataclasses import replace

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
