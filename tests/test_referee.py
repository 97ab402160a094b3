"""The referee without images: a scripted 81-card game under both penalty readings and solo,
claims by keys, cards that come back, cards seen twice, the computer opponent, the summary."""

from __future__ import annotations

import json

import pytest
from game_script import PLAYERS, claims_script, expected_events, scripted_game, simplify
from setvision.solver import BEGINNER, find_sets, parse_card
from setvision.solver.errors import SetvisionError
from setvision.solver.referee import (
    Opponent,
    Referee,
    RefereeSettings,
    TableView,
    event_record,
    summarise,
    summary_record,
    summary_table,
)

STEPS = scripted_game()


def _views(steps, per_step: int = 4, dt: float = 0.1):
    t = 0.0
    yield TableView(t, ())
    for step in steps:
        cards = tuple(c for c in step.slots if c is not None)
        for _ in range(per_step):
            t += dt
            yield TableView(t, cards, True, not find_sets(list(cards)))


def _play(settings: RefereeSettings, steps=STEPS, opponent=None) -> Referee:
    referee = Referee(settings, opponent)
    for view in _views(steps):
        referee.observe(view)
    return referee


def _simple(referee: Referee) -> list[tuple]:
    return [simplify(event_record(e)) for e in referee.events]


@pytest.mark.parametrize("penalty", ["lose-set", "sit-out"])
def test_a_scripted_game_is_refereed_event_for_event(penalty):
    settings = RefereeSettings(PLAYERS, penalty, claims=tuple(claims_script(STEPS)))
    referee = _play(settings)
    assert _simple(referee) == expected_events(STEPS, penalty)
    assert referee.over and referee.stock == 0
    expected = {"lose-set": (7, 8, 9), "sit-out": (8, 8, 9)}[penalty]
    assert tuple(score for _, score in referee.scores) == expected


def test_a_scripted_solo_game_counts_the_three_more_penalty():
    referee = _play(RefereeSettings(("Ann",), solo=True))
    assert _simple(referee) == expected_events(STEPS, "lose-set", solo=True)
    line = summarise(referee).players[0]
    assert (line.found, line.wrong, line.penalties, line.score) == (25, 2, 3, 22)


def test_the_script_holds_what_the_issue_asks_for():
    actions = [s.action for s in STEPS]
    assert actions[:3] == ["deal", "more", "more"] and actions.count("wrong") == 2
    assert sum(len(s.cards) for s in STEPS if s.action in ("deal", "more", "refill")) == 81
    prompts = [e[1] for e in expected_events(STEPS, "lose-set") if e[0] == "prompt"]
    assert prompts[:4] == [
        "deal 12",
        "no set among 12: add three",
        "no set among 15: add three",
        "do not refill: 15 on the table",
    ]
    assert "refill to 12" in prompts and prompts[-1] == "stock empty and no set: the round is over"


C = {
    text: parse_card(text)
    for text in (
        "1-red-solid-oval", "2-red-solid-oval", "3-red-solid-oval",
        "1-green-solid-oval", "1-purple-solid-oval", "2-green-striped-diamond",
    )
}  # fmt: skip
SET = (C["1-red-solid-oval"], C["2-red-solid-oval"], C["3-red-solid-oval"])
NOT_SET = (C["1-red-solid-oval"], C["2-red-solid-oval"], C["2-green-striped-diamond"])


def _referee(penalty="lose-set", players=("Ann", "Bob"), **kw) -> Referee:
    return Referee(RefereeSettings(players, penalty, variant=BEGINNER, hold_views=1, **kw))


def _table(referee: Referee, t: float, cards, sure: bool = False, edge=()) -> list:
    return referee.observe(TableView(t, tuple(cards), True, sure, frozenset(edge)))


def test_a_claim_by_keys_scores_once_when_its_cards_leave():
    referee = _referee()
    _table(referee, 1, list(C.values()))  # a game under way: 6 cards, stock unknown
    kinds = [e.kind for e in referee.claim(2, "Ann", SET)]
    assert kinds == ["claim", "verdict", "score", "prompt"]
    assert referee.prompt.startswith("Ann takes 1-red-solid-oval")
    events = _table(referee, 3, [c for c in C.values() if c not in SET])
    assert [e.kind for e in events] == ["prompt"] and referee.score("Ann") == 1
    assert referee.prompt == "refill to 12"


def test_lose_set_hands_back_nothing_without_a_set_and_sit_out_refuses_the_next_claim():
    referee = _referee("lose-set")
    _table(referee, 1, list(C.values()))
    events = referee.claim(2, "Ann", NOT_SET)
    assert [(e.kind, getattr(e, "text", None)) for e in events if e.kind == "penalty"] == [
        ("penalty", "no set won yet: nothing to hand back")
    ]
    referee = _referee("sit-out")
    _table(referee, 1, list(C.values()))
    referee.claim(2, "Ann", NOT_SET)
    refused = referee.claim(3, "Ann", SET)
    assert refused[1].outcome == "refused" and referee.score("Ann") == 0
    assert referee.sitting_out() == ("Ann",)
    referee.claim(4, "Bob", SET)
    assert referee.sitting_out() == () and referee.score("Bob") == 1


def test_cards_of_a_wrong_claim_come_back_as_the_same_cards():
    referee = _referee(claims=("Bob",))
    _table(referee, 0, [])
    _table(referee, 1, list(C.values()))
    stock = referee.stock
    _table(referee, 2, [c for c in C.values() if c not in NOT_SET])
    events = _table(referee, 3, list(C.values()))
    assert [e.kind for e in events] == ["returned"] and referee.stock == stock == 27 - 6


def test_a_card_seen_again_after_its_set_left_is_flagged_and_not_counted():
    referee = _referee(claims=("Ann",), patience_s=0)
    _table(referee, 0, [])
    _table(referee, 1, list(C.values()))
    _table(referee, 2, [c for c in C.values() if c not in SET])
    stock = referee.stock
    events = _table(referee, 3, [c for c in C.values() if c not in SET[1:]])
    assert [e.kind for e in events] == ["flag", "flag"] and "seen again" in events[1].text
    assert referee.stock == stock
    assert (
        referee.claim(4, "Ann", (SET[0], C["1-green-solid-oval"], C["1-purple-solid-oval"]))[
            1
        ].outcome
        == "unsure"
    )


def test_cards_leaving_with_others_appearing_or_at_the_edge_are_not_claims():
    referee = _referee(patience_s=0)
    _table(referee, 1, list(C.values()))
    swapped = [c for c in C.values() if c not in SET] + [parse_card("3-green-solid-diamond")] * 3
    events = _table(referee, 2, swapped[:4] + [parse_card(t) for t in ("3-green-solid-diamond",
                    "3-purple-solid-diamond", "3-red-solid-diamond")])  # fmt: skip
    assert not [e for e in events if e.kind == "claim"] and events[0].kind == "flag"
    referee = _referee()
    _table(referee, 1, list(C.values()), edge=SET)
    events = _table(referee, 2, [c for c in C.values() if c not in SET])
    assert [e.kind for e in events][:1] == ["flag"] and "edge" in events[0].text


def test_no_set_is_prompted_only_once_the_reading_is_sure():
    cards = [C["1-red-solid-oval"], C["2-red-solid-oval"], C["1-green-solid-oval"]]
    referee = _referee()
    _table(referee, 0, [])
    _table(referee, 1, cards)
    assert referee.prompt == "deal 12"  # three cards only: the deal goes on
    referee = Referee(RefereeSettings(("Ann",), hold_views=1))
    twelve = [c for c in (parse_card(t) for t in _CAP12)]
    assert not find_sets(twelve)
    referee.observe(TableView(0, ()))
    referee.observe(TableView(1, tuple(twelve), True, False))
    assert referee.prompt == "deal 12"
    referee.observe(TableView(2, tuple(twelve), True, True))
    assert referee.prompt == "no set among 12: add three"


_CAP12 = [str(c) for c in STEPS[0].cards]


def test_the_computer_claims_the_easiest_set_after_its_delay():
    opponent = Opponent("hard", seed=3)
    referee = Referee(RefereeSettings(("Ann",), hold_views=1), opponent)
    referee.observe(TableView(0, ()))
    table = tuple(STEPS[2].slots[i] for i in range(18))
    referee.observe(TableView(1, table))
    due = referee._plan.due
    level = opponent.level
    assert 1 + 0.8 * (level.base_s + level.per_attribute_s) <= due
    assert due <= 1 + 1.2 * (level.base_s + 4 * level.per_attribute_s)
    assert referee.observe(TableView(due - 0.01, table)) == []
    events = referee.observe(TableView(due, table))
    assert [e.kind for e in events] == ["claim", "verdict", "score", "prompt"]
    assert events[0].player == "computer" and events[1].outcome == "valid"
    again = Referee(RefereeSettings(("Ann",), hold_views=1), Opponent("hard", seed=3))
    again.observe(TableView(0, ()))
    again.observe(TableView(1, table))
    assert again._plan == referee._plan or again._plan.due == due  # the same seed, the same game


def test_the_summary_as_json_and_as_a_table():
    settings = RefereeSettings(PLAYERS, "lose-set", claims=tuple(claims_script(STEPS)))
    summary = summarise(_play(settings))
    record = json.loads(json.dumps(summary_record(summary)))
    assert [p["name"] for p in record["players"]] == list(PLAYERS)
    assert len(record["taken"]) == 25 and record["stock"] == 0
    assert sum(t["handed_back"] for t in record["taken"]) == 1
    table = summary_table(summary)
    assert table.splitlines()[1].split() == ["Ann", "7", "8", "1", "1", "7"]
    assert "25 sets taken" in table


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": ()}, "at least one"),
        ({"players": ("Ann", "Ann")}, "different names"),
        ({"players": ("Ann", "Bob"), "penalty": "none"}, "--penalty must be"),
        ({"players": ("Ann", "Bob"), "solo": True}, "solo is for one"),
        ({"players": ("Ann",), "claims": ("Zed",)}, "Zed"),
    ],
)
def test_bad_settings_are_refused_with_one_line(kwargs, message):
    with pytest.raises(SetvisionError, match=message):
        RefereeSettings(**kwargs)
