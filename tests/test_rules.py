"""The dealer's situations of RULES.md and the scoring options."""

import pytest
from setvision.solver.rules import Action, Scoreboard, WrongClaim, dealer_advice
from setvision.solver.variants import BEGINNER_9, STANDARD


@pytest.mark.parametrize(
    "size, stock, has_set, action, deal",
    [
        (12, 60, True, Action.PLAY, 0),
        (12, 60, False, Action.ADD_THREE, 3),
        (15, 57, False, Action.ADD_THREE, 3),
        (18, 54, False, Action.ADD_THREE, 3),
        (9, 60, True, Action.REFILL, 3),  # a set was taken from 12: refill to 12
        (12, 57, True, Action.PLAY, 0),  # a set was taken from 15: back to 12, no refill
        (15, 54, True, Action.PLAY, 0),  # taken from 18: stays at 15
        (9, 2, False, Action.REFILL, 2),  # the stock cannot fill all gaps
        (9, 0, True, Action.PLAY, 0),  # stock empty: play on the remaining cards
        (9, 0, False, Action.ROUND_OVER, 0),
        (12, 0, False, Action.ROUND_OVER, 0),
        (12, 2, False, Action.ADD_THREE, 2),
        (21, 30, False, Action.IMPOSSIBLE, 0),  # 21 cards always hold a set
        (12, None, False, Action.ADD_THREE, 3),
    ],
)
def test_dealer_advice(size, stock, has_set, action, deal):
    advice = dealer_advice(size, stock, has_set, STANDARD)
    assert (advice.action, advice.deal) == (action, deal)
    assert advice.message


def test_beginner_nine_card_layout():
    assert dealer_advice(6, 18, True, BEGINNER_9).deal == 3
    assert dealer_advice(9, 18, False, BEGINNER_9).action is Action.ADD_THREE
    assert dealer_advice(12, 15, False, BEGINNER_9).action is Action.IMPOSSIBLE


def test_negative_sizes_are_refused():
    with pytest.raises(ValueError):
        dealer_advice(-1, 3, True)


def test_wrong_claim_reading_a_loses_one_set_but_never_below_zero():
    board = Scoreboard(WrongClaim.LOSE_A_SET)
    board.wrong("ann")
    assert board.score("ann") == 0
    board.valid_claim("ann")
    board.valid_claim("ann")
    board.wrong("ann")
    assert board.score("ann") == 1 and board.can_claim("ann")


def test_wrong_claim_reading_b_sits_out_until_another_player_finds_a_set():
    board = Scoreboard(WrongClaim.SIT_OUT)
    board.valid_claim("ann")
    board.wrong("ann")
    assert board.score("ann") == 1 and not board.can_claim("ann")
    with pytest.raises(ValueError, match="may not claim"):
        board.valid_claim("ann")
    board.valid_claim("bob")
    assert board.can_claim("ann")


def test_solo_penalty_costs_a_point_per_three_added():
    board = Scoreboard(solo_penalty=True)
    board.valid_claim("me")
    board.added_three("me")
    board.added_three("me")
    assert board.score("me") == -1
    assert Scoreboard().score("me") == 0
