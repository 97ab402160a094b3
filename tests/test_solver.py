"""Exhaustive facts about the deck and the solver."""

import random
from itertools import combinations

import pytest
from setvision.solver import (
    BEGINNER,
    STANDARD,
    Card,
    explain,
    find_sets,
    is_set,
    parse_card,
    third_card,
)
from setvision.solver.errors import CardParseError
from setvision.solver.odds import sets_in_deck, simulate

DECK = STANDARD.deck


def test_deck_has_81_distinct_cards_and_round_trips_text_and_index():
    assert len(DECK) == len(set(DECK)) == 81
    for index, card in enumerate(sorted(DECK, key=lambda c: c.index)):
        assert card.index == index
        assert Card.from_index(index) == card
        assert parse_card(str(card)) == card


def test_full_deck_holds_1080_sets():
    assert len(find_sets(DECK)) == 1080
    assert sets_in_deck(STANDARD) == 1080


def test_find_sets_agrees_with_brute_force_on_random_layouts():
    rng = random.Random(7)
    for _ in range(50):
        layout = rng.sample(DECK, rng.randint(3, 21))
        brute = [t for t in combinations(range(len(layout)), 3) if is_set(*(layout[i] for i in t))]
        assert find_sets(layout) == brute


def test_every_pair_has_exactly_one_completing_card():
    for a, b in combinations(DECK, 2):
        completing = [c for c in DECK if c not in (a, b) and is_set(a, b, c)]
        assert completing == [third_card(a, b)]


def test_third_card_of_equal_cards_is_refused():
    with pytest.raises(ValueError, match="differ"):
        third_card(DECK[0], DECK[0])


#: A 20-card collection without a set (the largest possible size), found by search.
CAP_20 = [
    "1-red-solid-oval",
    "1-red-solid-diamond",
    "1-red-striped-oval",
    "1-red-striped-diamond",
    "1-green-solid-oval",
    "1-green-solid-diamond",
    "1-green-striped-oval",
    "1-green-striped-diamond",
    "2-red-solid-oval",
    "2-red-solid-diamond",
    "2-red-striped-squiggle",
    "2-red-open-squiggle",
    "2-green-solid-squiggle",
    "2-purple-solid-squiggle",
    "3-red-striped-squiggle",
    "3-green-solid-squiggle",
    "3-green-striped-oval",
    "3-green-striped-diamond",
    "3-green-open-squiggle",
    "3-purple-striped-squiggle",
]


def test_a_20_card_cap_has_no_set_and_every_added_card_makes_one():
    cap = [parse_card(text) for text in CAP_20]
    assert len(cap) == 20 and find_sets(cap) == []
    for card in DECK:
        if card not in cap:
            assert find_sets([*cap, card]), f"adding {card} should make a set"


def test_every_sampled_21_card_layout_holds_a_set():
    rng = random.Random(21)
    for _ in range(2000):
        assert find_sets(rng.sample(DECK, 21))


def test_beginner_deck_counts():
    deck = BEGINNER.deck
    assert len(deck) == 27 and {c.shading for c in deck} == {"solid"}
    assert sets_in_deck(BEGINNER) == 117  # 27 * 26 / 6
    assert BEGINNER.largest_set_free == 9
    assert BEGINNER.max_layout == 12
    assert STANDARD.max_layout == 21


@pytest.mark.parametrize(
    "text, message",
    [
        ("2-red-stripy-oval", "'stripy' is not a shading"),
        ("4-red-striped-oval", "'4' is not a number"),
        ("2-blue-striped-oval", "'blue' is not a color"),
        ("2-red-striped", "expected NUMBER-COLOR-SHADING-SHAPE"),
        ("2-red-striped-oval-x", "expected NUMBER-COLOR-SHADING-SHAPE"),
        ("", "expected NUMBER-COLOR-SHADING-SHAPE"),
    ],
)
def test_parse_names_the_bad_token(text, message):
    with pytest.raises(CardParseError, match=message):
        parse_card(text)


def test_parse_is_case_insensitive():
    assert parse_card(" 3-Purple-OPEN-squiggle ") == Card(3, "purple", "open", "squiggle")


def test_explain_says_which_attribute_fails_in_a_players_words():
    a, b, c = (
        parse_card(t) for t in ("1-red-solid-oval", "2-red-open-oval", "3-green-striped-oval")
    )
    check = explain(a, b, c)
    assert not check.valid
    assert [f.attribute for f in check.failures] == ["color"]
    assert check.summary() == "not a set: colour: red, red, green: two the same and one different"


def test_explain_accepts_a_valid_set_and_rejects_a_repeated_card():
    a, b, c = (
        parse_card(t)
        for t in ("1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle")
    )
    assert explain(a, b, c).valid and explain(a, b, c).summary() == "valid set"
    assert not explain(a, a, b).valid
    assert "named twice" in explain(a, a, b).summary()


def test_simulation_is_close_to_the_published_odds_and_reproducible():
    odds = simulate(12, 60_000, seed=1)
    low, high = odds.interval()
    assert 0.027 < odds.probability < 0.038 and low < odds.probability < high
    assert simulate(12, 5_000, seed=3) == simulate(12, 5_000, seed=3)
    assert simulate(21, 2_000).without_set == 0
