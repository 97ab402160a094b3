"""The referee of one round: the table as it changes, claims, penalties, scores and prompts.

Pure game logic on card identities (no images). It is fed ``TableView``s, the table as read
at successive moments, and claims named by three cards. A table is taken as changed only once
the same cards have been read, with nothing covered or being re-read, for a few views in a
row (``RefereeSettings.hold_views``); cards leaving or joining other than three at a time
must persist ``patience_s`` more before they are believed, and are then flagged.

Cards are matched between views by identity, since a deck holds each card once: a card that
leaves must have been on the table; a card that comes back after leaving with a set already
won is flagged (a misread, or two decks mixed) and is neither counted in the stock nor
judged; the cards of a claim that was not scored are expected back and recognised when they
return. The stock is the deck less every card seen, known when the game was seen from the
deal (an empty table first, or a first table of exactly the normal layout).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from setvision.solver.cards import Card
from setvision.solver.errors import SetvisionError
from setvision.solver.referee.events import (
    Claim,
    Deal,
    Event,
    Flag,
    Penalty,
    Prompt,
    Returned,
    RoundEnd,
    ScoreChange,
    Verdict,
)
from setvision.solver.referee.opponent import Opponent, Plan
from setvision.solver.replay import split_into_sets
from setvision.solver.rules import Action, Scoreboard, WrongClaim, dealer_advice
from setvision.solver.sets import explain, find_sets
from setvision.solver.variants import STANDARD, Variant

#: The two readings of the wrong-claim penalty, as the command line names them.
PENALTIES: dict[str, WrongClaim] = {
    "lose-set": WrongClaim.LOSE_A_SET,
    "sit-out": WrongClaim.SIT_OUT,
}
#: Who takes a set when no player is named for it: judged, scored to nobody.
TABLE = "table"


@dataclass(frozen=True)
class TableView:
    """The table as read at one moment.

    ``cards`` are the identities read, in display order; ``settled`` is False while a card's
    look is changing (covered by a hand, being re-read); ``no_set_sure`` says the reading holds
    no set and may be trusted (every card confident, none possibly missed, read steadily).
    """

    t: float
    cards: tuple[Card, ...] = ()
    settled: bool = True
    no_set_sure: bool = False
    edge: frozenset[Card] = frozenset()

    def __post_init__(self) -> None:
        if self.no_set_sure and find_sets(list(self.cards)):
            raise ValueError("no_set_sure, but the cards hold a set")


@dataclass(frozen=True)
class RefereeSettings:
    """Who plays and under which rules.

    ``claims`` names, in order, who took each set that leaves the table when no player key
    was pressed (a script for headless runs); past its end, a lone player takes every set,
    else the set goes to ``TABLE``. ``solo`` (one player) scores the solo penalty, and a
    wrong claim hands back a set (there is nobody to sit out for).
    """

    players: tuple[str, ...]
    penalty: str = "lose-set"
    variant: Variant = STANDARD
    solo: bool = False
    claims: tuple[str, ...] = ()
    hold_views: int = 3
    patience_s: float = 3.0
    arm_s: float = 15.0

    def __post_init__(self) -> None:
        if not self.players:
            raise SetvisionError("name at least one player")
        if len(set(self.players)) != len(self.players):
            raise SetvisionError(
                f"players must have different names, got {', '.join(self.players)}"
            )
        if TABLE in self.players:
            raise SetvisionError(f"{TABLE!r} is kept for sets taken by nobody named")
        if self.penalty not in PENALTIES:
            raise SetvisionError(
                f"--penalty must be one of {', '.join(PENALTIES)}, got {self.penalty!r}"
            )
        if self.solo and len(self.players) != 1:
            raise SetvisionError(f"solo is for one player, got {len(self.players)}")
        unknown = sorted(set(self.claims) - set(self.players) - {TABLE})
        if unknown:
            raise SetvisionError(f"claims name players not in the game: {', '.join(unknown)}")
        if self.hold_views < 1:
            raise ValueError(f"hold_views must be at least 1, got {self.hold_views}")

    @property
    def rule(self) -> WrongClaim:
        return WrongClaim.LOSE_A_SET if self.solo else PENALTIES[self.penalty]

    def describe(self) -> str:
        """The rules in force, as said at the start of a game."""
        if self.solo:
            return (
                "solo: a wrong claim hands back one set; three more cards while a set is on "
                "the table cost one point"
            )
        if self.rule is WrongClaim.LOSE_A_SET:
            return (
                "penalty lose-set: a wrong claim hands back one set won (none when there is none)"
            )
        return (
            "penalty sit-out: after a wrong claim a player may not claim until another finds a set"
        )


@dataclass(frozen=True)
class TakenSet:
    """A set scored: when, by whom, its cards, and whether it was handed back later."""

    t: float
    player: str
    cards: tuple[Card, Card, Card]
    handed_back: bool = False


@dataclass
class PlayerRecord:
    """A player's tallies beside the score."""

    name: str
    found: int = 0
    wrong: int = 0
    penalties: int = 0


@dataclass
class _Candidate:
    """A reading of the table seen in a row, not yet taken as the table."""

    key: tuple[Card, ...]
    since: float
    views: int = 1


@dataclass
class Referee:
    """Follows one round; every method returns the events it caused (also kept in ``events``)."""

    settings: RefereeSettings
    opponent: Opponent | None = None
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.settings
        names = list(s.players)
        if self.opponent is not None:
            if self.opponent.name in names or self.opponent.name == TABLE:
                raise SetvisionError(f"a player may not be called {self.opponent.name!r}")
            names.append(self.opponent.name)
        self.names = tuple(names)
        self.board = Scoreboard(s.rule, solo_penalty=s.solo)
        self.records = {name: PlayerRecord(name) for name in self.names}
        self.layout_size = s.variant.layout_size
        self.table: tuple[Card, ...] = ()
        self.seen: set[Card] = set()
        self.gone: dict[Card, float] = {}  # cards of scored sets that left, and when
        self.doubled: set[Card] = set()  # seen twice in the game: not counted, not judged
        self.out: set[Card] = set()  # cards of a claim not scored, expected back
        self.hidden: set[Card] = set()  # left without being judged: may be seen again
        self.edge: set[Card] = set()  # cards at the edge of the picture on the table
        self.pending: list[tuple[str, frozenset[Card]]] = []  # scored, still on the table
        self.taken: list[TakenSet] = []
        self.from_deal: bool | None = None
        self.dealt = False  # the opening deal is complete
        self.sure = False  # the table's "no set" reading may be trusted
        self.over = False
        self.started: float | None = None
        self.ended: float | None = None
        self.now = 0.0
        self._script = deque(s.claims)
        self._armed: tuple[str, float] | None = None
        self._candidate: _Candidate | None = None
        self._first_empty: bool | None = None
        self._prompted: str | None = None  # said for the table as it is now
        self._last_prompt: str | None = None
        self._plan: Plan | None = None
        self._new: list[Event] = []

    # ------------------------------------------------------------ what the caller sees

    @property
    def stock(self) -> int | None:
        """Cards left in the stock: the deck less every card seen; None when not known."""
        return len(self.settings.variant.deck) - len(self.seen) if self.from_deal else None

    def score(self, player: str) -> int:
        return self.board.score(player)

    @property
    def scores(self) -> tuple[tuple[str, int], ...]:
        return tuple((name, self.board.score(name)) for name in self.names)

    def sitting_out(self) -> tuple[str, ...]:
        return tuple(name for name in self.names if not self.board.can_claim(name))

    @property
    def prompt(self) -> str | None:
        """The dealer's latest prompt."""
        return self._last_prompt

    # ------------------------------------------------------------ inputs

    def observe(self, view: TableView) -> list[Event]:
        """Take the table as read now; a change counts once it holds."""
        self.now = view.t
        if self.over:
            return []
        if self._first_empty is None:
            self._first_empty = not view.cards
            if not view.cards:
                self._say(view.t, f"deal {self.layout_size}")
        key = tuple(sorted(view.cards))
        candidate = self._candidate
        if not view.settled:
            self._candidate = None
        elif candidate is not None and candidate.key == key:
            candidate.views += 1
        else:
            self._candidate = _Candidate(key, view.t)
        candidate = self._candidate
        if candidate is not None and candidate.views >= self.settings.hold_views:
            if key != tuple(sorted(self.table)):
                self._change(view, candidate)
            elif view.no_set_sure and not self.sure:
                self.sure = True
                self._prompt_now(view.t)
        self._play_computer(view.t)
        return self._flush()

    def claim(self, t: float, player: str, cards: Iterable[Card], how: str = "keys") -> list[Event]:
        """A player names three cards on the table (keys and clicks, or the computer).

        The player's key pressed before the clicks was this claim: it no longer names them
        the taker of the next three cards to leave."""
        if player not in self.names:
            raise SetvisionError(f"{player!r} is not playing ({', '.join(self.names)})")
        if self._armed is not None and self._armed[0] == player:
            self._armed = None
        self.now = t
        if self.over:
            return []
        self._judge(t, player, tuple(cards), how, taken=False)
        self._prompt_now(t)
        self._replan(t)
        return self._flush()

    def arm(self, t: float, player: str) -> None:
        """A player key alone: the next three cards to leave the table are that player's."""
        if player not in self.settings.players:
            raise SetvisionError(f"{player!r} is not playing ({', '.join(self.names)})")
        self._armed = (player, t)

    def finish(self, t: float) -> list[Event]:
        """The video or camera stopped: the round ends here if it had not."""
        if not self.over:
            self._end(t, "stopped before the round was over")
        return self._flush()

    # ------------------------------------------------------------ the table changed

    def _change(self, view: TableView, candidate: _Candidate) -> None:
        t = view.t
        before, after = set(self.table), set(view.cards)
        removed = before - after
        added = after - before
        back = added & self.seen
        new = added - self.seen
        odd = len(removed) % 3 or (self.dealt and len(new) % 3) or len(back - self.hidden) % 3
        if odd and t - candidate.since < self.settings.patience_s:
            return  # a card still being placed or taken, or a misreading: wait
        if self.from_deal is None:
            self.from_deal = bool(self._first_empty) or len(view.cards) == self.layout_size
            if not self.from_deal:
                self.dealt = True
                self._flag(
                    t,
                    f"the first table holds {len(view.cards)} cards, not a fresh deal of "
                    f"{self.layout_size}: the stock is not known",
                )
        for card, count in Counter(view.cards).items():
            if count > 1 and card not in self.doubled:
                self.doubled.add(card)
                self._flag(t, f"{card} is read {count} times on the table: not counted", (card,))
        why_not = self._not_a_take(removed, added - self.out, len(before), len(after), odd)
        kept = [c for c in self.table if c not in removed]
        self.table = tuple(view.cards)
        self.edge = set(view.edge)
        self.sure = view.no_set_sure
        self._prompted = None
        if why_not:
            self._flag(t, why_not, tuple(sorted(removed | added)))
            self.hidden |= removed
        elif removed:
            self._removed(t, sorted(removed))
        if back:
            self._returned(t, back)
        if new:
            self._dealt(t, sorted(new), kept)
        self._prompt_now(t, after_take=bool(removed) and not why_not)
        self._replan(t)

    def _not_a_take(
        self, removed: set[Card], added: set[Card], before: int, after: int, odd: bool
    ) -> str | None:
        """Why the cards that left are not judged as a claim (None: they are, or none left).

        A real take leaves a layout of a multiple of three, nothing else changing at that
        moment, and never through the edge of the picture (the camera moved instead).
        """
        if odd:
            return (
                f"{len(removed)} card(s) left and {len(added)} appeared: cards come and go "
                "three at a time, so a card is misread or hidden; not judged"
            )
        if not removed:
            return None
        if added:
            return (
                f"{len(removed)} cards left while {len(added)} others appeared: a misreading "
                "or the camera moved; not judged"
            )
        if before % 3 or after % 3:
            return (
                f"{len(removed)} cards left a table of {before}: a card may be missed; not judged"
            )
        if removed & self.edge:
            return f"{len(removed)} cards left at the edge of the picture: not judged"
        return None

    def _removed(self, t: float, removed: list[Card]) -> None:
        groups = split_into_sets(removed) if len(removed) > 3 else None
        if groups is None:
            groups = [tuple(removed[i : i + 3]) for i in range(0, len(removed), 3)]
        for group in groups:
            cards = frozenset(group)
            scored = next((p for p in self.pending if p[1] == cards), None)
            if scored is not None:  # a claim already judged: its cards are taken away
                self.pending.remove(scored)
                self.gone.update((card, t) for card in cards)
                continue
            self._judge(t, self._claimant(t), tuple(group), "taken", taken=True)

    def _claimant(self, t: float) -> str:
        if self._armed is not None:
            player, when = self._armed
            self._armed = None
            if t - when <= self.settings.arm_s:
                return player
        if self._script:
            return self._script.popleft()
        if len(self.settings.players) == 1:
            return self.settings.players[0]
        return TABLE

    def _returned(self, t: float, back: set[Card]) -> None:
        again = sorted(back & set(self.gone) - self.doubled)
        for card in again:
            self.doubled.add(card)
            self._flag(
                t,
                f"{card} left the table with a set at {self.gone[card]:.1f} s and is seen "
                "again: a misread, or two decks mixed; not counted",
                (card,),
            )
        self.hidden -= back
        returned = sorted((back & self.out) - set(again))
        if returned:
            self.out -= set(returned)
            self._emit(Returned(t, tuple(returned), len(self.table)))

    def _dealt(self, t: float, new: list[Card], kept: list[Card]) -> None:
        self.seen.update(new)
        if self.started is None:
            self.started = t
        if not self.dealt:
            reason = "deal"
            self.dealt = len(self.table) >= self.layout_size
        else:
            refill = max(0, self.layout_size - len(kept))
            if len(new) <= refill:
                reason = "refill"
            else:
                reason = "three more" if refill == 0 else "refill and three more"
        self._emit(Deal(t, tuple(new), reason, len(self.table), self.stock))
        if reason == "three more":
            self._three_more(t, kept)

    def _three_more(self, t: float, kept: list[Card]) -> None:
        """Cards added beyond the refill: right only when no set lay on the table."""
        found = find_sets(kept)
        if not found:
            return
        shown = tuple(kept[i] for i in found[0])
        names = ", ".join(str(c) for c in shown)
        if not self.settings.solo:
            self._flag(t, f"three more cards dealt while a set was on the table: {names}", shown)
            return
        player = self.settings.players[0]
        self.board.added_three(player)
        self.records[player].penalties += 1
        self._emit(
            Penalty(
                t, player, "three more", f"three more cards while a set was on the table: {names}"
            )
        )
        self._emit(
            ScoreChange(t, player, -1, self.score(player), "three more with a set on the table")
        )

    # ------------------------------------------------------------ claims

    def _judge(self, t: float, player: str, cards: tuple[Card, ...], how: str, taken: bool) -> None:
        self._emit(Claim(t, player, cards, how))
        refusal = self._refusal(player, cards, taken)
        if refusal is not None:
            outcome, reason = refusal
            self._emit(Verdict(t, player, cards, outcome, reason))
            if taken:
                self.out |= set(cards)
            return
        check = explain(*cards)
        if check.valid:
            self._emit(Verdict(t, player, cards, "valid", check.summary()))
            self.taken.append(TakenSet(t, player, tuple(sorted(cards))))
            if player == TABLE:
                self.board.sitting_out.clear()  # someone found a set
            else:
                self.board.valid_claim(player)
                self.records[player].found += 1
                self._emit(ScoreChange(t, player, 1, self.score(player), "valid set"))
            if taken:
                self.gone.update((card, t) for card in cards)
            else:
                self.pending.append((player, frozenset(cards)))
            return
        self._emit(Verdict(t, player, cards, "wrong", check.summary()))
        if taken:
            self.out |= set(cards)
        if player != TABLE:
            self.records[player].wrong += 1
            self._penalise(t, player)

    def _refusal(self, player: str, cards: tuple[Card, ...], taken: bool) -> tuple[str, str] | None:
        if len(cards) != 3 or len(set(cards)) != 3:
            return "refused", "a claim names three different cards"
        if not taken:
            missing = [str(c) for c in cards if c not in self.table]
            if missing:
                return "refused", f"not on the table: {', '.join(missing)}"
        if player != TABLE and not self.board.can_claim(player):
            return "refused", f"{player} may not claim until another player finds a set"
        doubled = [str(c) for c in cards if c in self.doubled]
        if doubled:
            return "unsure", f"seen twice in this game, not judged: {', '.join(doubled)}"
        return None

    def _penalise(self, t: float, player: str) -> None:
        self.records[player].penalties += 1
        if self.settings.rule is WrongClaim.SIT_OUT:
            self.board.wrong(player)
            text = f"{player} may not claim until another player finds a set"
            self._emit(Penalty(t, player, "sit-out", text))
            return
        if self.board.sets.get(player, 0) == 0:
            self._emit(Penalty(t, player, "lose-set", "no set won yet: nothing to hand back"))
            return
        self.board.wrong(player)
        last = max(i for i, s in enumerate(self.taken) if s.player == player and not s.handed_back)
        self.taken[last] = replace(self.taken[last], handed_back=True)
        self._emit(Penalty(t, player, "lose-set", "one set handed back"))
        self._emit(
            ScoreChange(t, player, -1, self.score(player), "wrong claim: one set handed back")
        )

    # ------------------------------------------------------------ the dealer and the computer

    def _prompt_now(self, t: float, after_take: bool = False) -> None:
        if self.over:
            return
        text = self._advice(after_take)
        if text is None:
            return
        self._say(t, text)
        if text.startswith("stock empty"):
            self._end(t, "stock empty and no set")

    def _advice(self, after_take: bool) -> str | None:
        if self.out:
            return f"not scored: put back {_names(sorted(self.out))}"
        if self.pending:
            player, cards = self.pending[0]
            return f"{player} takes {_names(sorted(cards))}"
        n, stock = len(self.table), self.stock
        if not self.dealt:
            return None if self.table else f"deal {self.layout_size}"
        has_set = bool(find_sets(list(self.table)))
        advice = dealer_advice(n, stock, has_set, self.settings.variant)
        if advice.action is Action.REFILL:
            return f"refill to {self.layout_size}"
        if advice.action is Action.PLAY:
            if after_take and n >= self.layout_size and stock != 0:
                return f"do not refill: {n} on the table"
            return None
        if not self.sure:
            return None  # no set as read, but the reading is not sure enough to say so
        if advice.action is Action.ROUND_OVER:
            return "stock empty and no set: the round is over"
        if advice.action is Action.IMPOSSIBLE:
            return f"{n} cards always hold a set: a card must be misread"
        return f"no set among {n}: add three"

    def _replan(self, t: float) -> None:
        opponent = self.opponent
        busy = self.out or self.pending or not self.dealt or self.over
        if opponent is None or busy or not self.board.can_claim(opponent.name):
            self._plan = None
            return
        if self._plan is None or not set(self._plan.cards) <= set(self.table):
            self._plan = opponent.plan(t, self.table)

    def _play_computer(self, t: float) -> None:
        plan = self._plan
        if plan is None or t < plan.due or self.opponent is None:
            return
        self._plan = None
        if set(plan.cards) <= set(self.table):
            self._judge(t, self.opponent.name, plan.cards, "computer", taken=False)
            self._prompt_now(t)

    # ------------------------------------------------------------ bookkeeping

    def _say(self, t: float, text: str) -> None:
        if text != self._prompted:
            self._prompted = self._last_prompt = text
            self._emit(Prompt(t, text))

    def _end(self, t: float, reason: str) -> None:
        self.over = True
        self.ended = t
        self._plan = None
        self._emit(RoundEnd(t, reason, self.scores))

    def _flag(self, t: float, text: str, cards: tuple[Card, ...] = ()) -> None:
        self._emit(Flag(t, text, cards))

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        self._new.append(event)

    def _flush(self) -> list[Event]:
        new, self._new = self._new, []
        return new


def _names(cards: Sequence[Card]) -> str:
    return ", ".join(str(c) for c in cards)
