"""The text commands through main([...]): exit codes and messages."""

import json

from setvision.cli import main


def test_solve_prints_cards_sets_and_advice(capsys):
    code = main(
        [
            "solve",
            "1-red-solid-oval",
            "2-red-solid-oval",
            "3-red-solid-oval",
            "1-green-open-diamond",
            "--stock",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "1  1-red-solid-oval" in out and "1 2 3" in out and "there is a set" in out


def test_solve_json_follows_the_contract_meanings(capsys):
    cards = [
        "1-red-solid-oval",
        "2-green-striped-diamond",
        "3-purple-open-squiggle",
        "1-red-open-oval",
    ]
    assert main(["solve", "--json", *cards]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in result["cards"]] == [1, 2, 3, 4]
    assert result["sets"] == [[1, 2, 3]] and result["verdict"] == "sets"


def test_solve_without_a_set_says_no_set_and_add_three(capsys):
    cards = [
        "1-red-solid-oval",
        "1-red-solid-diamond",
        "1-red-striped-oval",
        "1-red-striped-diamond",
    ]
    assert main(["solve", "--json", *cards]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "no_set"


def test_solve_rejects_bad_text_in_one_line(capsys):
    assert main(["solve", "1-red-solid-oval", "2-rouge-solid-oval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'rouge' is not a color" in err


def test_solve_rejects_a_card_given_twice_and_cards_outside_the_variant(capsys):
    assert main(["solve", "1-red-solid-oval", "1-red-solid-oval"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["solve", "--variant", "beginner", "1-red-open-oval"]) == 2
    assert "not in the beginner deck" in capsys.readouterr().err


def test_check_exit_codes(capsys):
    assert (
        main(["check", "1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle"])
        == 0
    )
    assert capsys.readouterr().out.startswith("valid set")
    assert main(["check", "1-red-solid-oval", "2-red-solid-oval", "3-green-solid-oval"]) == 1
    assert "colour: red, red, green: two the same and one different" in capsys.readouterr().out
    assert main(["check", "1-red-solid-oval", "2-red-solid-oval"]) == 2
    assert main(["check", "1-red-solid-oval", "2-red-solid-oval", "9-red-solid-oval"]) == 2
    assert "'9' is not a number" in capsys.readouterr().err


def test_odds_reports_an_interval_and_the_deck_count(capsys):
    assert main(["odds", "--cards", "12", "--trials", "20000"]) == 0
    out = capsys.readouterr().out
    assert "1080 sets" in out and "95% interval" in out
    assert main(["odds", "--cards", "2"]) == 2
    assert main(["odds", "--variant", "nope"]) == 2


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_set_resting_on_an_unsure_card_says_so():
    from setvision.cli import _set_line

    assert _set_line([1, 5, 7], {6}) == "  set: 1 5 7"
    assert _set_line([6, 13, 15], {6}) == "  set: 6 13 15  (if card 6 is read right)"
    assert _set_line([2, 6, 9], {6, 9}) == "  set: 2 6 9  (if cards 6, 9 are read right)"
