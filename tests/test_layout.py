"""Layouts: verdicts, reading order, joint settlement, drawing, the contract (synthetic cards)."""

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from conftest import read_as
from setvision.solver import VALUES, Card, parse_card
from setvision.vision.contract import layout_record
from setvision.vision.layout import CardReading, Ignored, Layout, verdict_message
from setvision.vision.order import reading_order
from setvision.vision.read.settle import settle
from setvision.vision.report.overlay import Annotator, place_panel, wrap_parts

SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "contract" / "detect.schema.json"


def _quad(x, y, w=60, h=90):
    return np.float32([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])


def _reading(text: str, x: float, y: float, sure: float = 0.99) -> CardReading:
    return read_as(text, _quad(x, y), sure)


NO_SET_12 = [  # twelve cards of the 20-card cap: no set among them
    "1-red-solid-oval", "1-red-solid-diamond", "1-red-striped-oval", "1-red-striped-diamond",
    "1-green-solid-oval", "1-green-solid-diamond", "1-green-striped-oval",
    "1-green-striped-diamond", "2-red-solid-oval", "2-red-solid-diamond",
    "2-red-striped-squiggle", "2-red-open-squiggle",
]  # fmt: skip


def _grid(texts, sure=0.99):
    return Layout((800, 600), tuple(_reading(t, 20 + 80 * (i % 4), 20 + 120 * (i // 4), sure)
                                    for i, t in enumerate(texts)))  # fmt: skip


def test_no_set_only_when_every_card_is_confident_and_the_count_is_plausible():
    assert _grid(NO_SET_12).verdict == "no_set"
    assert verdict_message(_grid(NO_SET_12)) == "no set among 12 cards: add three"
    shaky = list(_grid(NO_SET_12).cards)
    shaky[6] = _reading(NO_SET_12[6], 20 + 80 * 2, 140, sure=0.6)
    layout = Layout((800, 600), tuple(shaky))
    assert layout.verdict == "uncertain" and layout.uncertain == [7]
    assert "card 7" in verdict_message(layout)
    eleven = _grid(NO_SET_12[:11])
    assert eleven.verdict == "uncertain" and "multiple of three" in verdict_message(eleven)
    cut = Layout((800, 600), _grid(NO_SET_12).cards, (Ignored(_quad(700, 500), "cut"),))
    assert cut.verdict == "uncertain"


def test_sets_and_no_cards_verdicts():
    layout = _grid(["1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle"])
    assert layout.verdict == "sets" and layout.sets == [(1, 2, 3)]
    empty = Layout.empty((640, 480))
    assert empty.verdict == "no_cards" and empty.sets == []
    assert verdict_message(empty) == "no cards found"


def test_no_card_read_but_one_partly_seen_or_maybe_missed_says_so():
    cut = Layout((800, 600), (), (Ignored(_quad(740, 500), "cut by the image border"),))
    assert cut.verdict == "no_cards"
    assert verdict_message(cut) == "no card read: 1 card only partly visible"
    place = Layout((800, 600), (), (), possible=(_quad(10, 500),))
    assert verdict_message(place) == "no card read: a card may be missed near (40, 545)"


def test_reading_order_follows_rows_even_when_the_camera_is_tilted():
    angle = np.radians(12)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    quads = [(_quad(100 * c, 150 * r) @ rotation.T).astype(np.float32)
             for r in range(3) for c in range(4)]  # fmt: skip
    shuffled = [quads[i] for i in (5, 0, 11, 3, 7, 1, 9, 2, 4, 10, 6, 8)]
    order = reading_order(shuffled)
    assert [(5, 0, 11, 3, 7, 1, 9, 2, 4, 10, 6, 8)[i] for i in order] == list(range(12))
    assert reading_order([]) == []


def test_settle_gives_a_repeated_reading_to_the_less_sure_card():
    sure = {a: np.eye(3)[0] * 0.9 + 0.05 for a in VALUES}  # reads 1-red-solid-oval
    unsure = {a: p.copy() for a, p in sure.items()}
    unsure["color"] = np.array([0.5, 0.1, 0.4])  # red or purple
    probabilities = {a: np.stack([sure[a], unsure[a]]) for a in VALUES}
    cards = settle(probabilities)
    assert cards == [Card(1, "red", "solid", "oval"), Card(1, "purple", "solid", "oval")]


def test_card_reading_validates_its_shapes():
    with pytest.raises(ValueError, match="corners_xy"):
        CardReading(np.zeros((3, 2)), _reading("1-red-solid-oval", 0, 0).probabilities,
                    parse_card("1-red-solid-oval"))  # fmt: skip


@pytest.mark.parametrize("reveal", ["all", "one", "count", "none"])
def test_annotator_draws_on_a_copy_of_the_same_size(reveal):
    image = np.full((600, 800, 3), 30, np.uint8)
    layout = _grid(["1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle"])
    drawn = Annotator(reveal=reveal).annotate(image, layout)
    assert drawn.shape == image.shape and (drawn != image).any()
    assert (image == 30).all()  # the input is untouched
    assert Annotator().annotate(image, Layout.empty((800, 600))).shape == image.shape
    with pytest.raises(ValueError, match="reveal"):
        Annotator(reveal="most")


def test_a_place_where_a_card_may_be_missed_is_dashed_and_asked_about_when_no_set_shows():
    image = np.full((600, 800, 3), 30, np.uint8)
    place = _quad(500, 300, 120, 180)
    layout = Layout((800, 600), _grid(NO_SET_12[:3]).cards, possible=(place,))
    drawn = Annotator().annotate(image, layout)
    red = (drawn[..., 2] > 150) & (drawn[..., 1] < 90) & (drawn[..., 0] < 90)
    left_side = red[300:480, 498:503].any(axis=1)  # the place's left side, row by row
    assert 0.3 < left_side.mean() < 0.8  # dashes: drawn along part of it, gaps between
    assert red[370:410, 540:580].any()  # the "?" at its middle
    without = Annotator().annotate(image, replace(layout, possible=()))
    assert not ((without[..., 2] > 150) & (without[..., 1] < 90))[300:480, 498:503].any()
    a_set = ["1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle"]
    with_sets = replace(layout, cards=_grid(a_set).cards)
    assert with_sets.verdict == "sets"  # beside the sets found, the place is not drawn
    drawn = Annotator().annotate(image, with_sets)
    assert not ((drawn[..., 2] > 150) & (drawn[..., 1] < 90))[300:480, 498:503].any()


def test_a_long_legend_goes_into_columns_rather_than_over_the_cards():
    cards = np.zeros((600, 800), np.uint8)
    cards[200:, :] = 1  # cards everywhere but a band at the top
    place = place_panel(cards, 12, widths=[150] * 15, verdict_width=300, line_height=30)
    assert place.y == 0 and place.y + place.height <= 200
    assert len(place.column_widths) >= 3 and place.rows * len(place.column_widths) >= 15
    free = np.zeros((600, 800), np.uint8)  # nothing to avoid: one column is enough
    assert len(place_panel(free, 0, [150] * 15, 300, 30).column_widths) == 1


def test_a_long_verdict_is_wrapped_after_its_semicolons():
    text = "uncertain: card 1 (red 55% / purple 45%); 1 card only partly visible; no set"
    lines = wrap_parts(text, 45, len)
    assert lines == ["uncertain: card 1 (red 55% / purple 45%);",
                     "1 card only partly visible; no set"]  # fmt: skip
    assert wrap_parts("3 sets among 12 cards", 10, len) == ["3 sets among 12 cards"]


def test_contract_record_validates_against_the_shared_schema():
    schema = json.loads(SCHEMA.read_text())
    layout = _grid(NO_SET_12[:6] + ["1-red-solid-oval"] * 0)
    record = layout_record(layout, "table.jpg")
    jsonschema.validate(record, schema)
    assert [c["id"] for c in record["cards"]] == list(range(1, 7))
    assert all(len(c["corners"]) == 4 for c in record["cards"])
    jsonschema.validate(layout_record(Layout.empty((10, 10)), "x.jpg"), schema)


def test_beside_the_sets_found_the_text_answer_names_a_card_that_may_be_missed(capsys):
    from setvision.cli import _print_layout

    a_set = ["1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle"]
    layout = Layout((800, 600), _grid(a_set).cards, possible=(_quad(500, 300),))
    _print_layout(layout_record(layout, "photo.jpg"), None)
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "  1 set among 3 cards",
        "  sets with a card not read are not counted: a card may be missed near (530, 345)",
    ]
    _print_layout(layout_record(replace(layout, possible=()), "photo.jpg"), None)
    assert capsys.readouterr().out.splitlines()[-1] == "  1 set among 3 cards"
