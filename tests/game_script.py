"""A whole game of SET played by a script, and what a referee must say about it.

``scripted_game`` deals a shuffled 81-card deck and plays it to the end as players would:
the opening 12 hold no set and neither do 15 (three more twice), sets are taken, the dealer
refills or does not, three more are dealt once while a set lies on the table (a dealer's
mistake; in solo the penalty), two wrong claims take three cards that are not a set and put
them back, and the round ends when the stock is empty and no set is left. Every step is the
table after it, card by card in its place (``slots``).

``expected_events`` is the script's own account, written from what the script did (not by
running the referee): the events a referee must emit, in the simplified form ``simplify``
gives to the referee's JSON lines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from setvision.solver import STANDARD, Card, find_sets, is_set

SLOTS = 21  # 3 rows of 7 places
PLAYERS = ("Ann", "Bob", "Eve")


@dataclass(frozen=True)
class Step:
    """One thing done at the table: ``action`` by ``player`` with ``cards``; ``slots`` after."""

    action: str  # deal | more | take | wrong | return | refill
    cards: tuple[Card, ...]
    slots: tuple[Card | None, ...]
    player: str | None = None


def _set_free(rng: random.Random, deck: list[Card], size: int) -> list[Card]:
    while True:
        cards: list[Card] = []
        for card in rng.sample(deck, len(deck)):
            if all(not is_set(a, b, card) for i, a in enumerate(cards) for b in cards[i + 1 :]):
                cards.append(card)
                if len(cards) == size:
                    return cards


def scripted_game(seed: int = 7, players: tuple[str, ...] = PLAYERS) -> list[Step]:
    rng = random.Random(seed)
    deck = list(STANDARD.deck)
    opening = _set_free(rng, deck, 15)
    rest = [c for c in deck if c not in opening]
    rng.shuffle(rest)
    stock = opening + rest
    slots: list[Card | None] = [None] * SLOTS
    steps: list[Step] = []
    sitting: str | None = None
    turn = 0
    wrongs_done = 0
    mistake_done = False

    def table() -> list[Card]:
        return [c for c in slots if c is not None]

    def put(n: int, action: str) -> None:
        cards = tuple(stock.pop(0) for _ in range(min(n, len(stock))))
        free = [i for i, c in enumerate(slots) if c is None]
        for i, card in zip(free, cards):
            slots[i] = card
        steps.append(Step(action, cards, tuple(slots)))

    def lift(cards: tuple[Card, ...], action: str, player: str) -> None:
        for i, c in enumerate(slots):
            if c in cards:
                slots[i] = None
        steps.append(Step(action, cards, tuple(slots), player))

    def next_player() -> str:
        nonlocal turn
        while True:
            player = players[turn % len(players)]
            turn += 1
            if player != sitting:
                return player

    put(12, "deal")
    put(3, "more")
    put(3, "more")
    while True:
        cards = table()
        found = find_sets(cards)
        if len(steps) in (4, 30) and wrongs_done < 2 and len(players) > 1:
            # a wrong claim: the next player (the first has no set yet) takes three non-set cards
            player = players[1] if wrongs_done == 0 else players[0]
            wrong = next(
                (a, b, c)
                for i, a in enumerate(cards)
                for j, b in enumerate(cards[i + 1 :], i + 1)
                for c in cards[j + 1 :]
                if not is_set(a, b, c)
            )
            lift(tuple(sorted(wrong)), "wrong", player)
            free = [i for i, c in enumerate(slots) if c is None]
            for i, card in zip(free, sorted(wrong)):
                slots[i] = card
            steps.append(Step("return", tuple(sorted(wrong)), tuple(slots)))
            sitting, wrongs_done = player, wrongs_done + 1
            continue
        if len(cards) < 12 and stock:
            put(12 - len(cards), "refill")
        elif (
            found and not mistake_done and len(cards) == 12 and len(stock) >= 3 and len(steps) > 12
        ):
            mistake_done = True
            put(3, "more")  # the dealer's mistake: a set lies on the table
        elif found:
            pick = found[rng.randrange(len(found))]
            player = next_player()
            if sitting is not None and player != sitting:
                sitting = None
            lift(tuple(sorted(cards[i] for i in pick)), "take", player)
        elif stock:
            put(3, "more")
        else:
            return steps


def expected_events(
    steps: list[Step], penalty: str, solo: bool = False, players: tuple[str, ...] = PLAYERS
) -> list[tuple]:
    """The events a referee must give, simplified; ``solo``: every claim is the one player's."""
    names = players[:1] if solo else players
    held = dict.fromkeys(names, 0)
    points = dict.fromkeys(names, 0)
    rule = "lose-set" if solo else penalty
    stock = 81
    events: list[tuple] = [("prompt", "deal 12")]
    table: list[Card] = []
    out: list[Card] = []

    def score(player: str) -> int:
        return held[player] - points[player]

    def advice(after_take: bool) -> list[tuple]:
        n, has_set = len(table), bool(find_sets(table))
        if n < 12 and stock:
            return [("prompt", "refill to 12")]
        if has_set:
            if after_take and n >= 12 and stock:
                return [("prompt", f"do not refill: {n} on the table")]
            return []
        if not stock:
            end = ("end", "stock empty and no set", tuple((p, score(p)) for p in names))
            return [("prompt", "stock empty and no set: the round is over"), end]
        return [("prompt", f"no set among {n}: add three")]

    for step in steps:
        cards = tuple(sorted(str(c) for c in step.cards))
        player = names[0] if solo else step.player
        if step.action in ("deal", "more", "refill"):
            before = list(table)
            table += list(step.cards)
            stock -= len(cards)
            reason = {"deal": "deal", "more": "three more", "refill": "refill"}[step.action]
            events.append(("deal", reason, cards, len(table), stock))
            if step.action == "more" and find_sets(before):
                if solo:
                    points[player] += 1
                    events += [
                        ("penalty", player, "three more"),
                        ("score", player, -1, score(player)),
                    ]
                else:
                    events.append(("flag",))
            events += advice(False)
        elif step.action == "take":
            table = [c for c in table if c not in step.cards]
            held[player] += 1
            events += [("claim", player, cards, "taken"), ("verdict", player, cards, "valid")]
            events.append(("score", player, 1, score(player)))
            events += advice(True)
        elif step.action == "wrong":
            table = [c for c in table if c not in step.cards]
            out = list(cards)
            events += [("claim", player, cards, "taken"), ("verdict", player, cards, "wrong")]
            if rule == "sit-out":
                events.append(("penalty", player, "sit-out"))
            elif held[player]:
                held[player] -= 1
                events += [("penalty", player, "lose-set"), ("score", player, -1, score(player))]
            else:
                events.append(("penalty", player, "lose-set"))
            events.append(("prompt", "not scored: put back " + ", ".join(str(c) for c in out)))
        elif step.action == "return":
            table += list(step.cards)
            events.append(("returned", cards))
            events += advice(False)
    return events


def simplify(record: dict) -> tuple:
    """A referee's JSON line in the form ``expected_events`` writes."""
    kind = record["event"]
    cards = tuple(sorted(record.get("cards", ()), key=str))
    if kind == "prompt":
        return (kind, record["text"])
    if kind == "deal":
        return (kind, record["reason"], cards, record["table"], record["stock"])
    if kind == "returned":
        return (kind, cards)
    if kind == "claim":
        return (kind, record["player"], cards, record["how"])
    if kind == "verdict":
        return (kind, record["player"], cards, record["outcome"])
    if kind == "score":
        return (kind, record["player"], record["delta"], record["score"])
    if kind == "penalty":
        return (kind, record["player"], record["rule"])
    if kind == "end":
        return (kind, record["reason"], tuple(record["scores"].items()))
    return (kind,)


def claims_script(steps: list[Step]) -> list[str]:
    """Who took the cards each time three left the table, in order (for ``--claims``)."""
    return [step.player for step in steps if step.action in ("take", "wrong")]
