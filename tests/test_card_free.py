"""Photos without SET cards (beds, chairs, paving, boxes): the answer is "no cards", and
`eval --card-free` measures how often it is."""

import json

import pytest
from setvision.cli import main
from setvision.vision.learn.card_free import (
    CardFreeResult,
    card_free_files,
    card_free_result,
    format_card_free,
)

#: Two of the publisher's photos of the bare surfaces: paving stones in sun and shade, and a
#: slatted wooden chair on tiles.
PAVING = "boards/TheBananaBender__Set_vision_player/train__photo_92_2025-06-08_18-42-13.jpg"
CHAIR = "boards/TheBananaBender__Set_vision_player/val__photo_76_2025-06-08_18-34-19.jpg"


def test_the_card_free_photos_are_none_of_the_outlined_ones(data_dir):
    files = card_free_files()
    assert len(files) == len(set(files)) == 27
    outlined = {}
    for line in (data_dir / "outlines.jsonl").read_text().splitlines():
        row = json.loads(line)
        outlined[row["file"]] = row.get("outlines")
    for file in files:
        assert (data_dir / file).is_file()
        assert outlined.get(file, "absent") is None  # listed there, never outlined


@pytest.mark.parametrize("file", [PAVING, CHAIR])
def test_a_real_photo_without_cards_answers_no_cards(reader, photo, data_dir, file):
    layout = reader.read_photo(photo(data_dir / file))
    assert not layout.cards
    assert layout.verdict == "no_cards"
    assert card_free_result(file, layout).right


def test_the_table_counts_answers_and_false_cards():
    results = [
        CardFreeResult("a.jpg", 0, 0, "no_cards"),
        CardFreeResult("b.jpg", 2, 1, "uncertain"),
        CardFreeResult("c.jpg", 0, 0, "error", "ValueError: broken"),
    ]
    assert [r.right for r in results] == [True, False, False]
    lines = format_card_free(results).splitlines()
    assert lines[2] == "| 3 | 1 (33.3%) | 2 | 1 |"
    assert lines[3] == "verdicts: error 1, no_cards 1, uncertain 1"


def test_card_free_is_measured_alone(capsys):
    assert main(["eval", "--card-free", "--loso"]) == 2
    assert "--card-free reads its own photos as shipped" in capsys.readouterr().err
