"""Explicit calibration: fitting a deck profile, storing it, reading with it, and the commands."""

import io
import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from setvision.app.readers import choose_profile
from setvision.calibration import profiles
from setvision.calibration.deck import (
    MAX_ODDS,
    AttributeProfile,
    CalibrationError,
    DeckProfile,
    check_found,
    fit_profile,
)
from setvision.calibration.known import measure_photo
from setvision.calibration.measure import (
    COLUMNS,
    SourceResult,
    format_results,
    known_photo,
    sources_to_measure,
)
from setvision.calibration.profiles import ProfileError, chain, reader_for
from setvision.cli import main
from setvision.solver import parse_card
from setvision.vision.learn.evaluate import score_board
from setvision.vision.pipeline import CardReader
from setvision.vision.read.classify import load_models

PROJECT = Path(__file__).resolve().parent.parent
WEBCAM = PROJECT / "sample_images" / "data__webcam__20170604_134005.jpg"
#: Two boards of one deck and table (robertdeleon98), both shown as under a dim lamp: the
#: general model reads three striped cards of the test board as solid; the deck's own cards on
#: the other board, under the same light, settle them.
FIT_BOARD = "boards/robertdeleon98__SET_Solver/Test_Images__test1.jpg"
TEST_BOARD = "boards/robertdeleon98__SET_Solver/Test_Images__test6.jpg"


def dim(image: np.ndarray) -> np.ndarray:
    """The photo as under a dim lamp: darker, and darker still in the shadows."""
    return np.clip((image / 255.0) ** 2.0 * 255 * 0.6, 0, 255).astype(np.uint8)


@pytest.fixture(autouse=True)
def config_home(tmp_path, monkeypatch) -> Path:
    """Every test gets its own empty config directory."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "setvision"


@pytest.fixture(scope="module")
def general() -> CardReader:
    return CardReader(load_models())


@pytest.fixture(scope="module")
def measured(boards, photo, general):
    """The two boards under a dim lamp, each measured once."""
    found = {}
    for file in (FIT_BOARD, TEST_BOARD):
        original = photo(boards[file].path)
        found[file] = measure_photo(general, replace(original, image=dim(original.image)))
    return found


@pytest.fixture(scope="module")
def deck(boards, measured) -> DeckProfile:
    known = known_photo(boards[FIT_BOARD], measured[FIT_BOARD])
    return fit_profile("dim-lamp", [known], "2026-01-01T00:00:00+00:00", "test")


@pytest.fixture(scope="module")
def webcam_layout(photo):
    """The sample photo as `calibrate` reads it (general model and per-photo calibration)."""
    return reader_for().read_photo(photo(WEBCAM))


@pytest.fixture(scope="module")
def webcam_cards(webcam_layout) -> list[str]:
    """The sample photo's cards as text, in the order `detect` numbers them (read right)."""
    return [str(c.card) for c in webcam_layout.cards]


def _stored(config_home: Path) -> list[str]:
    folder = config_home / "profiles"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# ---------------------------------------------------------------- fitting and applying


def test_a_profile_weighs_only_the_values_it_saw_and_at_most_max_odds():
    profile = AttributeProfile(
        "color", ("ink_a",), ("red", "green"), (3, 3), np.array([[1.0], [-1.0]]), np.array([0.1])
    )
    refined = profile.refine(np.array([[1.0]]), np.full((1, 3), 1 / 3))
    expected = [2 / 3 * MAX_ODDS / (MAX_ODDS + 1), 2 / 3 / (MAX_ODDS + 1), 1 / 3]
    np.testing.assert_allclose(refined[0], expected)


def test_chain_applies_adjusters_in_order():
    def add(k):
        return lambda features, p: {"x": p["x"] * 10 + k}

    assert chain(None, None) is None
    assert chain(None, add(1))([], {"x": 0})["x"] == 1
    assert chain(add(1), None, add(2))([], {"x": 0})["x"] == 12


def test_a_profile_round_trips_through_json(deck, measured):
    path = profiles.save_profile(deck)
    assert path.parent == profiles.profiles_dir() and path.name == "dim-lamp.json"
    loaded = profiles.load_profile("dim-lamp")
    assert loaded.to_dict() == json.loads(json.dumps(deck.to_dict()))
    assert loaded.fitted_on == deck.fitted_on and set(loaded.attributes) == set(deck.attributes)
    features = measured[TEST_BOARD].features
    p = load_models().predict(features)
    assert deck.attributes and features
    for attribute in deck.attributes:
        np.testing.assert_allclose(loaded(features, p)[attribute], deck(features, p)[attribute],
                                   atol=1e-5)  # fmt: skip


def test_a_profile_from_one_board_helps_another_board_of_the_same_deck(
    boards, measured, deck, general
):
    board, cards = boards[TEST_BOARD], measured[TEST_BOARD]
    assert deck.fitted_on.cards >= 9 and set(deck.attributes) == {"color", "shading"}
    profiles.save_profile(deck)

    def exact(profile: str | None, auto: bool) -> int:
        reader = reader_for(profile, models=general.models, auto=auto)
        result = score_board(board, cards.read(reader))
        assert result.found == len(board.cards)
        return result.exact

    plain, with_profile = exact(None, auto=False), exact("dim-lamp", auto=False)
    assert with_profile > plain or plain == len(board.cards)  # it matters here: 12 against 9
    assert exact("dim-lamp", auto=True) >= exact(None, auto=True)


def test_measured_cards_are_in_the_order_detect_numbers_them(measured, general):
    cards = measured[TEST_BOARD]
    layout = cards.read(general)
    assert len(layout.cards) == len(cards.quads) >= 9
    for reading, quad in zip(layout.cards, cards.quads):
        np.testing.assert_allclose(reading.corners_xy, quad)


# ---------------------------------------------------------------- bad input writes nothing


def test_a_photo_with_no_cards_is_refused(tmp_path, capsys, config_home):
    blank = tmp_path / "table.jpg"
    cv2.imwrite(str(blank), np.full((480, 640, 3), (40, 90, 30), np.uint8))
    code = main(["calibrate", str(blank), "--name", "deck", "--cards", "1-red-solid-oval"])
    err = capsys.readouterr().err
    assert code == 2 and "no cards found" in err and err.count("\n") == 1
    assert _stored(config_home) == []


def test_too_few_cards_are_refused():
    with pytest.raises(CalibrationError, match="only 4 cards found; .* 6 or more"):
        check_found("photo.jpg", 4)


def test_cards_of_one_colour_only_are_refused(capsys, config_home, webcam_cards):
    reds, used = [], set()
    for text in webcam_cards:  # each card recoloured red, all different
        number, _, shading, shape = text.split("-")
        candidates = [f"{n}-red-{s}-{h}" for n in (number, "1", "2", "3")
                      for s in (shading, "solid", "striped", "open")
                      for h in (shape, "oval", "diamond", "squiggle")]  # fmt: skip
        reds.append(next(c for c in candidates if c not in used))
        used.add(reds[-1])
    code = main(["calibrate", str(WEBCAM), "--name", "deck", "--cards", ",".join(reds)])
    err = capsys.readouterr().err
    assert code == 2
    assert "too few values to calibrate: colour: only red has 2 cards or more" in err
    assert "green, purple" in err and _stored(config_home) == []


def test_a_count_that_does_not_match_names_both_counts(capsys, config_home, webcam_cards):
    code = main(["calibrate", str(WEBCAM), "--name", "deck", "--cards", ",".join(webcam_cards[1:])])
    err = capsys.readouterr().err
    assert code == 2 and "12 cards found but 11 given" in err
    assert _stored(config_home) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--name", "no spaces", "--cards", "1-red-solid-oval"], "letters, digits"),
        (["--name", "deck"], "name the cards: --cards"),
        (["--name", "deck", "--cards", "a", "--cards", "b"], "1 photo(s) but --cards given 2"),
    ],
)
def test_bad_calibrate_arguments_are_one_line(argv, message, capsys, config_home):
    assert main(["calibrate", str(WEBCAM), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert _stored(config_home) == []


@pytest.fixture
def quiet_temp(tmp_path, monkeypatch) -> Path:
    """The annotated photo that `calibrate --interactive` shows goes to a test folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_interactive_calibration_cancelled_at_end_of_input_writes_nothing(
    capsys, config_home, monkeypatch, quiet_temp
):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["calibrate", str(WEBCAM), "--name", "deck", "--interactive"]) == 2
    captured = capsys.readouterr()
    shown = captured.out.split("drawn on ")[1].split()[0]
    assert Path(shown).parent == quiet_temp and " 12  " in captured.out
    assert not Path(shown).exists(), "the annotated photo shown is removed when calibration ends"
    assert "calibration cancelled: nothing written" in captured.err
    assert _stored(config_home) == []


def test_interactive_calibration_takes_corrections(
    capsys, config_home, monkeypatch, webcam_layout, webcam_cards, quiet_temp
):
    unsure = len(webcam_layout.uncertain)
    answers = "\n" * unsure + "1\n1-purple-open-oval\n\n"  # keep the unsure ones; fix card 1
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    assert main(["calibrate", str(WEBCAM), "--name", "deck", "--interactive"]) == 0
    assert "card 1 is" in capsys.readouterr().out
    cards = [parse_card(t) for t in ["1-purple-open-oval", *webcam_cards[1:]]]
    fitted = profiles.load_profile("deck").fitted_on
    for attribute in ("color", "shading", "shape"):
        assert sum(fitted.values[attribute].values()) == 12
        for value, count in fitted.values[attribute].items():
            assert count == sum(c.value(attribute) == value for c in cards)


# ---------------------------------------------------------------- profiles and reading with them


def test_profiles_list_show_default_delete(capsys, config_home, webcam_cards):
    assert main(["profiles"]) == 0
    assert "no profiles yet" in capsys.readouterr().out
    assert (
        main(["calibrate", str(WEBCAM), "--name", "webcam", "--cards", ",".join(webcam_cards)]) == 0
    )
    out = capsys.readouterr().out
    assert "profile 'webcam' written to" in out and "colour   refined" in out
    assert _stored(config_home) == ["webcam.json"]

    assert main(["profiles", "default", "webcam"]) == 0
    assert main(["profiles", "list"]) == 0
    assert "* webcam" in capsys.readouterr().out
    assert json.loads((config_home / "config.json").read_text()) == {"default_profile": "webcam"}
    assert main(["profiles", "show", "webcam"]) == 0
    out = capsys.readouterr().out
    assert "(the default)" in out and "fitted on 12 cards from 1 photo(s)" in out
    assert str(WEBCAM) in out

    assert main(["profiles", "show", "other"]) == 2
    assert "no profile named 'other' (profiles: webcam)" in capsys.readouterr().err
    copied = config_home / "profiles" / "copied.json"
    shutil.copy(config_home / "profiles" / "webcam.json", copied)
    assert main(["profiles", "show", "copied"]) == 0
    assert capsys.readouterr().out.startswith(f"profile 'copied': {copied}\n")
    copied.unlink()
    assert main(["profiles", "default", "--clear"]) == 0
    assert main(["profiles", "default"]) == 0
    assert "default profile: none" in capsys.readouterr().out
    assert main(["profiles", "delete", "webcam"]) == 0
    assert _stored(config_home) == []
    assert main(["profiles", "delete", "webcam"]) == 2


def test_detect_reads_with_the_default_or_named_profile(capsys, config_home, webcam_cards):
    assert (
        main(["calibrate", str(WEBCAM), "--name", "webcam", "--cards", ",".join(webcam_cards)]) == 0
    )
    assert main(["detect", "--json", str(WEBCAM)]) == 0  # no default yet: no profile
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["profile"] is None
    main(["profiles", "default", "webcam"])
    capsys.readouterr()
    assert main(["detect", "--json", str(WEBCAM)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [c["text"] for c in record["cards"]] == webcam_cards and record["profile"] == "webcam"
    assert main(["detect", str(WEBCAM)]) == 0
    assert capsys.readouterr().out.startswith("profile: webcam (the default)\n")
    assert main(["detect", str(WEBCAM), "--profile", "webcam"]) == 0
    assert capsys.readouterr().out.startswith("profile: webcam\n")
    assert main(["detect", str(WEBCAM), "--profile", "missing"]) == 2
    assert "no profile named 'missing' (profiles: webcam)" in capsys.readouterr().err
    (config_home / "profiles" / "webcam.json").unlink()
    with pytest.raises(ProfileError, match="default profile 'webcam' is missing"):
        choose_profile(None)
    assert main(["detect", str(WEBCAM)]) == 2
    assert "default profile 'webcam' is missing" in capsys.readouterr().err


def test_a_damaged_profile_file_is_one_line(config_home):
    folder = config_home / "profiles"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text('{"format": 1, "name": "broken"}')
    with pytest.raises(ProfileError, match="broken.json: not a usable profile"):
        reader_for("broken")


# ---------------------------------------------------------------- the measurement


def test_measured_sources_have_two_boards_with_positions_in_name_order(boards):
    sources = sources_to_measure(list(boards.values()))
    assert "olicht/set-solver" not in sources  # one board only
    assert all(len(b) >= 2 and all(x.has_positions for x in b) for b in sources.values())
    files = [b.file for b in sources["robertdeleon98/SET_Solver"]]
    assert files == sorted(files) and files[0] == FIT_BOARD


def test_the_table_leaves_sources_without_a_profile_out_of_the_total():
    fitted = SourceResult("a/deck", "a.jpg", 2, 24, 23, dict(zip(COLUMNS, (20, 21, 22, 22))))
    unfitted = SourceResult("b/deck", None, 3, 30, 30, dict(zip(COLUMNS, (30, 29, 0, 0))))
    lines = format_results([fitted, unfitted]).splitlines()
    assert lines[0].split() == ["source", "boards", "cards", "found", *COLUMNS]
    assert lines[1].split()[1:] == ["2", "24", "0.958", "0.833", "0.875", "0.917", "0.917"]
    assert lines[2].split()[-2:] == ["-", "-"]
    assert lines[3].split()[-7:] == lines[1].split()[1:]
