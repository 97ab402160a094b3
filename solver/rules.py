"""What the dealer does next, and the scoring options where editions differ."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from setvision.solver.variants import STANDARD, Variant


class Action(enum.Enum):
    PLAY = "play"  # a set is on the table: players look for it
    REFILL = "refill"  # after a set was taken from a normal layout: deal back up to normal size
    ADD_THREE = "add_three"  # no set on the table: the dealer adds three cards
    ROUND_OVER = "round_over"  # stock empty and no set left
    IMPOSSIBLE = "impossible"  # no set among so many cards cannot happen: the reading is wrong


@dataclass(frozen=True)
class Advice:
    action: Action
    deal: int
    message: str


def dealer_advice(
    layout_size: int, stock: int | None, has_set: bool, variant: Variant = STANDARD
) -> Advice:
    """The dealer's next step; ``stock=None`` when the stock size is unknown (assumed not empty)."""
    if layout_size < 0 or (stock is not None and stock < 0):
        raise ValueError("layout size and stock must not be negative")
    stock_left = stock is None or stock > 0
    normal = variant.layout_size
    if layout_size < normal and stock_left:
        deal = normal - layout_size if stock is None else min(normal - layout_size, stock)
        return Advice(Action.REFILL, deal, f"deal {deal} to refill the layout to {normal}")
    if has_set:
        return Advice(Action.PLAY, 0, "there is a set: find it")
    if not stock_left:
        return Advice(Action.ROUND_OVER, 0, "no set and the stock is empty: the round is over")
    if layout_size > variant.largest_set_free:
        return Advice(
            Action.IMPOSSIBLE,
            0,
            f"{layout_size} cards always hold a set: some card must be misread",
        )
    deal = 3 if stock is None else min(3, stock)
    return Advice(Action.ADD_THREE, deal, f"no set among {layout_size} cards: add three")


class WrongClaim(enum.Enum):
    """The two readings of the penalty for calling a set that is not one."""

    LOSE_A_SET = "lose-a-set"  # reading A: discard one set already won, if any
    SIT_OUT = "sit-out"  # reading B: no further claim until another player finds a set


@dataclass
class Scoreboard:
    """Sets won per player under a chosen penalty rule (and the solo penalty)."""

    wrong_claim: WrongClaim = WrongClaim.LOSE_A_SET
    solo_penalty: bool = False
    sets: dict[str, int] = field(default_factory=dict)
    penalties: dict[str, int] = field(default_factory=dict)
    sitting_out: set[str] = field(default_factory=set)

    def can_claim(self, player: str) -> bool:
        return player not in self.sitting_out

    def valid_claim(self, player: str) -> None:
        if not self.can_claim(player):
            raise ValueError(f"{player} may not claim until another player finds a set")
        self.sets[player] = self.sets.get(player, 0) + 1
        self.sitting_out.clear()  # another player found a set: everyone may claim again

    def wrong(self, player: str) -> None:
        if self.wrong_claim is WrongClaim.LOSE_A_SET:
            self.sets[player] = max(0, self.sets.get(player, 0) - 1)
        else:
            self.sitting_out.add(player)

    def added_three(self, player: str) -> None:
        """Solo play: each time the player needs three more cards it costs a point."""
        if self.solo_penalty:
            self.penalties[player] = self.penalties.get(player, 0) + 1

    def score(self, player: str) -> int:
        return self.sets.get(player, 0) - self.penalties.get(player, 0)
