"""Replay a game from successive table layouts: what was taken, what was dealt, how it ended.

Pure game logic on card lists (no images): each photo becomes a ``Snapshot`` of the cards
read and whether each was read confidently; cards are matched between photos by identity,
since a deck holds every card once. A finding that rests on an uncertain reading is reported
as ``UNSURE``, never as a player's ``MISTAKE``.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations

from setvision.solver.cards import Card
from setvision.solver.sets import explain, find_sets, is_set
from setvision.solver.variants import STANDARD, Variant


class Level(str, enum.Enum):
    """How a finding reads: fine, a player's or dealer's error, not decidable, or a remark."""

    OK = "ok"
    MISTAKE = "mistake"
    UNSURE = "unsure"
    NOTE = "note"


#: More cards than this leaving or joining between two photos (two sets taken, or a refill
#: after two sets) means the photos do not follow each other: the step is not judged.
MAX_CHANGE = 6

_SEVERITY = {Level.OK: 0, Level.NOTE: 1, Level.UNSURE: 2, Level.MISTAKE: 3}


@dataclass(frozen=True)
class SeenCard:
    """One card on one photo: ``id`` is its number on that photo (1..n), when known."""

    card: Card
    confident: bool = True
    id: int | None = None

    def __str__(self) -> str:
        mark = "" if self.confident else "?"
        return f"{self.card}{mark}" if self.id is None else f"#{self.id} {self.card}{mark}"


@dataclass(frozen=True)
class Snapshot:
    """The table on one photo as read.

    ``complete`` is False when a card may be missing from ``cards`` (an outline cut by the
    border, or a count that is not a multiple of three); ``error`` says why a photo could not
    be read at all (it is then skipped by the replay).
    """

    name: str
    cards: tuple[SeenCard, ...] = ()
    complete: bool = True
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.error is None and bool(self.cards)

    def confident(self, card: Card) -> bool:
        """Every reading of ``card`` on this photo is confident (False for a card read twice)."""
        readings = [c for c in self.cards if c.card == card]
        return len(readings) == 1 and readings[0].confident

    def seen(self, card: Card) -> SeenCard:
        """The card as seen here; not confident when it was read more than once."""
        first = next(c for c in self.cards if c.card == card)
        return SeenCard(card, self.confident(card), first.id)


@dataclass(frozen=True)
class Finding:
    """One thing the replay says, with the cards it is about."""

    level: Level
    text: str
    cards: tuple[Card, ...] = ()


@dataclass(frozen=True)
class Step:
    """What happened between two readable photos.

    ``skipped`` names unreadable photos between them; ``positions`` are the two photos'
    indices in the sequence given to ``replay``.
    """

    before: str
    after: str
    removed: tuple[SeenCard, ...]
    added: tuple[SeenCard, ...]
    findings: tuple[Finding, ...]
    skipped: tuple[str, ...] = ()
    positions: tuple[int, int] = (0, 1)

    @property
    def level(self) -> Level:
        return worst(f.level for f in self.findings)


@dataclass(frozen=True)
class Replay:
    """Every step of a sequence, and how the round stood at the last photo.

    ``stock`` is the number of cards left in the stock after the last photo when it can be
    worked out (``stock_basis`` says how, or why not).
    """

    photos: tuple[str, ...]
    steps: tuple[Step, ...]
    ending: tuple[Finding, ...]
    stock: int | None
    stock_basis: str
    unread: tuple[str, ...] = field(default_factory=tuple)

    def count(self, level: Level) -> int:
        return sum(step.level is level for step in self.steps) + sum(
            f.level is level for f in self.ending
        )


def worst(levels: Iterable[Level]) -> Level:
    return max(levels, key=_SEVERITY.__getitem__, default=Level.OK)


def _in_order(cards: Iterable[SeenCard]) -> tuple[SeenCard, ...]:
    """By number on the photo (as a player reads them), else by identity."""
    return tuple(sorted(cards, key=lambda c: (c.id or 0, c.card)))


def _names(cards: Iterable[SeenCard]) -> str:
    return ", ".join(str(c) for c in cards)


def _uncertain_note(cards: Iterable[SeenCard]) -> str:
    """E.g. `` (#3 2-red-open-oval? not read confidently)``, or "" when all are confident."""
    doubtful = [str(c) for c in cards if not c.confident]
    return f" ({', '.join(doubtful)} not read confidently)" if doubtful else ""


def split_into_sets(cards: Sequence[Card]) -> list[tuple[Card, Card, Card]] | None:
    """A partition of ``cards`` into sets, or None when there is none (small inputs only)."""
    if not cards:
        return []
    first, rest = cards[0], list(cards[1:])
    for b, c in combinations(rest, 2):
        if is_set(first, b, c):
            remaining = [x for x in rest if x not in (b, c)]
            tail = split_into_sets(remaining)
            if tail is not None:
                return [(first, b, c), *tail]
    return None


def _misread_pairs(
    removed: Sequence[SeenCard], added: Sequence[SeenCard]
) -> list[tuple[SeenCard, SeenCard]]:
    """Readings that are probably one card read two ways: two cards one attribute apart,
    pairs with an uncertain reading first.

    Only called when the counts cannot be right (cards leave and join three at a time), so a
    misreading is certain; the pairing guesses which one.
    """
    pairs: list[tuple[SeenCard, SeenCard]] = []
    free_old, free_new = list(removed), list(added)
    for doubtful_only in (True, False):
        for old in list(free_old):
            for new in free_new:
                apart = sum(x != y for x, y in zip(old.card.codes, new.card.codes))
                if apart == 1 and (not doubtful_only or not (old.confident and new.confident)):
                    pairs.append((old, new))
                    free_old.remove(old)
                    free_new.remove(new)
                    break
    return pairs


class _Game:
    """Carries what is known across steps: cards seen, cards gone, the stock when known."""

    def __init__(self, first: Snapshot, variant: Variant, from_deal: bool | None):
        self.variant = variant
        self.deck = len(variant.deck)
        if from_deal is None:
            from_deal = len(first.cards) == variant.layout_size
        self.from_deal = from_deal
        self.first_size = len(first.cards)
        self.seen: set[Card] = {c.card for c in first.cards}
        self.confirmed: set[Card] = {c.card for c in first.cards if c.confident}
        self.gone: dict[Card, str] = {}

    def stock(self) -> int | None:
        """Cards in the stock: the deck minus every card seen so far (taken or on the table)."""
        return self.deck - len(self.seen) if self.from_deal else None

    def stock_is_exact(self) -> bool:
        """True when every card counted as seen was read confidently at least once."""
        return self.seen == self.confirmed

    def step(self, before: Snapshot, after: Snapshot, skipped: tuple[str, ...]) -> Step:
        stock_before = self.stock()
        findings: list[Finding] = []
        if skipped:
            findings.append(
                Finding(Level.NOTE, f"{len(skipped)} photo(s) in between could not be read")
            )
        for snapshot in (before, after):
            twice = sorted(c for c, n in Counter(c.card for c in snapshot.cards).items() if n > 1)
            for card in twice:
                text = f"{card} is read twice on {snapshot.name}: a misreading"
                findings.append(Finding(Level.UNSURE, text, (card,)))
        before_cards = {c.card for c in before.cards}
        after_cards = {c.card for c in after.cards}
        # each card judged by its reading on the photo where it was seen
        removed = _in_order(before.seen(c) for c in before_cards - after_cards)
        added = _in_order(after.seen(c) for c in after_cards - before_cards)

        small = max(len(removed), len(added)) <= MAX_CHANGE + 2
        if small and len(removed) % 3 == len(added) % 3 != 0:
            pairs = _misread_pairs(removed, added)[: len(removed) % 3]
            if len(pairs) == len(removed) % 3:
                for old, new in pairs:
                    text = (
                        f"{new} on {after.name} is probably {old} on {before.name}, "
                        "read differently"
                    )
                    findings.append(Finding(Level.UNSURE, text, (old.card, new.card)))
                removed = tuple(c for c in removed if c not in {old for old, _ in pairs})
                added = tuple(c for c in added if c not in {new for _, new in pairs})

        back = [c for c in added if c.card in self.gone]
        if len(removed) > MAX_CHANGE or len(added) > MAX_CHANGE:
            text = (
                f"{len(removed)} cards left and {len(added)} appeared: too many changes for "
                "photos of one game in a row (photos missing, or another table?); not judged"
            )
            findings.append(Finding(Level.UNSURE, text))
        elif back:
            text = (
                f"{_names(back)} left the table earlier "
                f"({', '.join(sorted({self.gone[c.card] for c in back}))}) but "
                f"{'is' if len(back) == 1 else 'are'} read again on {after.name}: "
                "a reading is wrong"
            )
            findings.append(Finding(Level.UNSURE, text, tuple(c.card for c in back)))
        if len(removed) <= MAX_CHANGE and len(added) <= MAX_CHANGE:
            findings += self._taken(removed, after)
            findings += self._dealt(before, removed, added, after, stock_before)
        if not removed and not added:
            findings.append(Finding(Level.NOTE, "no change between the photos"))

        for card in removed:
            self.gone.setdefault(card.card, before.name)
        self.seen |= after_cards
        self.confirmed |= {c.card for c in after.cards if c.confident}
        return Step(before.name, after.name, removed, added, tuple(findings), skipped)

    def _taken(self, removed: tuple[SeenCard, ...], after: Snapshot) -> list[Finding]:
        """Did the cards that left the table form sets?"""
        if not removed:
            return []
        cards = tuple(c.card for c in removed)
        doubtful = not all(c.confident for c in removed) or not after.complete
        doubt = _uncertain_note(removed) or (
            "" if after.complete else f" ({after.name} may not show every card)"
        )
        if len(removed) % 3:
            return [
                Finding(
                    Level.UNSURE,
                    f"{len(removed)} card(s) left the table ({_names(removed)}): cards leave "
                    f"three at a time, so a card is misread or hidden{doubt}",
                    cards,
                )
            ]
        if len(removed) == 3:
            check = explain(*cards)
            if check.valid:
                return [Finding(Level.OK, f"a set was taken: {_names(removed)}", cards)]
            why = check.summary()
            if doubtful:
                return [
                    Finding(
                        Level.UNSURE,
                        f"not judged: as read, the three cards that left ({_names(removed)}) "
                        f"are {why}, but the reading is in doubt{doubt}",
                        cards,
                    )
                ]
            return [
                Finding(
                    Level.MISTAKE,
                    f"three cards were taken that are {why} ({_names(removed)})",
                    cards,
                )
            ]
        sets = split_into_sets(list(cards))
        if sets is not None:
            listed = "; ".join(", ".join(str(c) for c in s) for s in sets)
            return [
                Finding(
                    Level.OK,
                    f"{len(sets)} sets were taken between the photos (a photo may be "
                    f"missing): {listed}",
                    cards,
                )
            ]
        level = Level.UNSURE if doubtful else Level.MISTAKE
        return [
            Finding(
                level,
                f"{len(removed)} cards left the table ({_names(removed)}) and they do not "
                f"split into sets{doubt}",
                cards,
            )
        ]

    def _dealt(
        self,
        before: Snapshot,
        removed: tuple[SeenCard, ...],
        added: tuple[SeenCard, ...],
        after: Snapshot,
        stock: int | None,
    ) -> list[Finding]:
        """Were the cards dealt the refill, or three more while a set was on the table?"""
        if len(added) % 3:
            doubt = _uncertain_note(added) or (
                "" if before.complete else f" ({before.name} may not show every card)"
            )
            return [
                Finding(
                    Level.UNSURE,
                    f"{len(added)} card(s) appeared ({_names(added)}): cards are dealt three at "
                    f"a time, so a card is misread or was hidden{doubt}",
                    tuple(c.card for c in added),
                )
            ]
        removed_cards = {c.card for c in removed}
        kept = [c for c in before.cards if c.card not in removed_cards]
        refill = max(0, self.variant.layout_size - len(kept))
        if stock is not None:
            refill = min(refill, stock)
        if len(added) < refill:
            if not added and stock is None:
                text = f"no cards dealt: {len(kept)} left on the table (the stock may be empty)"
                return [Finding(Level.NOTE, text)]
            return [
                Finding(
                    Level.NOTE,
                    f"{len(added)} card(s) dealt; the layout is {len(after.cards)} cards, "
                    f"short of {self.variant.layout_size}"
                    + (f" with {stock} in the stock" if stock is not None else ""),
                )
            ]
        if len(added) == refill:
            if not added:
                return []
            text = f"{len(added)} cards dealt to refill the layout to {len(kept) + len(added)}"
            return [Finding(Level.OK, text)]
        return [self._added_three(kept, added, refill)]

    def _added_three(
        self, kept: list[SeenCard], added: tuple[SeenCard, ...], refill: int
    ) -> Finding:
        """Cards beyond the refill: right only when no set lay on the table before them."""
        extra = len(added) - refill
        table = list(kept)
        # the table the dealer judged: the kept cards and whichever added cards were the refill
        choices = [list(s) for s in combinations(added, refill)] if refill else [[]]
        sure_sets, doubtful_sets = [], []
        for refill_cards in choices:
            cards = table + refill_cards
            found = [tuple(cards[i] for i in s) for s in find_sets([c.card for c in cards])]
            certain = [s for s in found if all(c.confident for c in s)]
            if not found:
                break
            if certain:
                sure_sets.append(certain[0])
            else:
                doubtful_sets.append(found[0])
        else:  # every way of telling refill from extra leaves a set on the table
            shown = sure_sets[0] if len(sure_sets) == len(choices) else None
            if shown is not None:
                return Finding(
                    Level.MISTAKE,
                    f"{extra} cards were added while a set was on the table: {_names(shown)}",
                    tuple(c.card for c in shown),
                )
            example = (sure_sets or doubtful_sets)[0]
            return Finding(
                Level.UNSURE,
                f"{extra} cards were added, though a set may have been on the table: "
                f"{_names(example)}{_uncertain_note(example)}",
                tuple(c.card for c in example),
            )
        size = len(table) + refill
        note = _uncertain_note(table)
        return Finding(
            Level.OK,
            f"no set among the {size} cards on the table: {extra} more added"
            + (f" (as read{note})" if note else ""),
        )

    def ending(self, last: Snapshot) -> tuple[list[Finding], str]:
        """How the round stands at the last photo, and how the stock was worked out."""
        stock = self.stock()
        if stock is None:
            basis = (
                f"the first photo holds {self.first_size} cards, not a fresh deal of "
                f"{self.variant.layout_size}: the stock is not known"
            )
        else:
            basis = (
                f"assuming the first photo shows the deal: stock = {self.deck} - "
                f"{len(self.seen)} cards seen (taken or on the table) = {stock}"
            )
            if not self.stock_is_exact():
                basis += ", counting cards not read confidently"
        cards = list(last.cards)
        found = [tuple(cards[i] for i in s) for s in find_sets([c.card for c in cards])]
        certain = [s for s in found if all(c.confident for c in s)]
        if certain:
            left = certain[0]
            text = (
                f"{len(found)} set(s) still on the table at {last.name}, e.g. {_names(left)}: "
                "the round goes on"
            )
            if stock == 0:
                text = "the stock is empty but " + text
            return [Finding(Level.NOTE, text, tuple(c.card for c in left))], basis
        doubtful = [c for c in cards if not c.confident]
        if found or doubtful or not last.complete:
            if found:
                why = f": {_names(found[0])}{_uncertain_note(found[0])}"
            elif doubtful:
                why = _uncertain_note(doubtful)
            else:
                why = f" ({last.name} may not show every card)"
            return [
                Finding(
                    Level.UNSURE,
                    f"whether a set is left on {last.name} cannot be said{why}",
                )
            ], basis
        if stock is None:
            return [
                Finding(
                    Level.NOTE,
                    f"no set among the {len(cards)} cards on {last.name}; whether the stock is "
                    "empty is not known, so the end of the round cannot be checked",
                )
            ], basis
        if stock == 0 and self.stock_is_exact():
            return [
                Finding(
                    Level.OK,
                    f"the round ended correctly: the stock is empty and no set is left among "
                    f"the {len(cards)} cards",
                )
            ], basis
        if stock == 0:
            return [
                Finding(
                    Level.UNSURE,
                    "no set is left and the stock looks empty, but the count rests on cards "
                    "not read confidently",
                )
            ], basis
        return [
            Finding(
                Level.NOTE,
                f"no set among the {len(cards)} cards on {last.name} and {stock} cards still "
                "in the stock: the round is not over, the dealer should add three",
            )
        ], basis


def replay(
    snapshots: Sequence[Snapshot], variant: Variant = STANDARD, from_deal: bool | None = None
) -> Replay:
    """Compare each readable photo with the previous one, then judge the end of the round.

    ``from_deal``: whether the first photo shows the opening deal (None: assume so when it
    holds exactly the variant's layout size), which makes the stock known by arithmetic.
    """
    readable = [i for i, s in enumerate(snapshots) if s.readable]
    names = tuple(s.name for s in snapshots)
    unread = tuple(s.name for s in snapshots if not s.readable)
    if not readable:
        return Replay(names, (), (), None, "no photo could be read", unread)
    game = _Game(snapshots[readable[0]], variant, from_deal)
    steps = []
    for i, j in zip(readable, readable[1:]):
        skipped = tuple(s.name for s in snapshots[i + 1 : j])
        step = game.step(snapshots[i], snapshots[j], skipped)
        steps.append(replace(step, positions=(i, j)))
    ending, basis = game.ending(snapshots[readable[-1]])
    return Replay(names, tuple(steps), tuple(ending), game.stock(), basis, unread)
