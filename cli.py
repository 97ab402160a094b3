"""setvision's command line: parse arguments, call the library, print. Nothing else."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from solver import SetvisionError, explain, find_sets, get_variant, parse_card, parse_cards
from solver.cards import Card
from solver.odds import simulate
from solver.rules import dealer_advice
from solver.variants import VARIANTS, Variant

logger = logging.getLogger("setvision")

EXIT_OK, EXIT_NO, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


# ---------------------------------------------------------------- text commands


def _checked_layout(cards: list[Card], variant: Variant) -> list[Card]:
    seen: dict[Card, int] = {}
    for position, card in enumerate(cards, 1):
        if not variant.holds(card):
            raise SetvisionError(f"card {position} ({card}) is not in the {variant.name} deck")
        if card in seen:
            raise SetvisionError(
                f"card {card} is given twice (cards {seen[card]} and {position}): "
                "a deck holds each card once"
            )
        seen[card] = position
    return cards


def cmd_solve(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    cards = _checked_layout(parse_cards(args.cards), variant)
    sets = [tuple(i + 1 for i in found) for found in find_sets(cards)]
    verdict = "sets" if sets else ("no_set" if cards else "no_cards")
    advice = dealer_advice(len(cards), args.stock, bool(sets), variant)
    if args.json:
        print(
            json.dumps(
                {
                    "cards": [
                        {"id": i, "text": str(card), **_card_fields(card)}
                        for i, card in enumerate(cards, 1)
                    ],
                    "sets": [list(s) for s in sets],
                    "verdict": verdict,
                    "advice": {
                        "action": advice.action.value,
                        "deal": advice.deal,
                        "message": advice.message,
                    },
                }
            )
        )
        return EXIT_OK
    width = len(str(len(cards)))
    for i, card in enumerate(cards, 1):
        print(f"{i:>{width}}  {card}")
    print(f"{len(sets)} set{'s' if len(sets) != 1 else ''}" + (":" if sets else ""))
    for found in sets:
        names = ", ".join(str(cards[i - 1]) for i in found)
        print(f"  {' '.join(str(i) for i in found)}  ({names})")
    print(f"dealer: {advice.message}")
    return EXIT_OK


def _card_fields(card: Card) -> dict:
    return {
        "number": card.number,
        "color": card.color,
        "shading": card.shading,
        "shape": card.shape,
    }


def _print_claim(check) -> None:
    print(check.summary())
    for attribute in check.attributes:
        print(f"  {'ok  ' if attribute.passes else 'FAIL'} {attribute}")


def cmd_check(args: argparse.Namespace) -> int:
    if len(args.items) != 3:
        raise SetvisionError(
            "check takes three cards (e.g. 1-red-solid-oval 2-green-open-diamond "
            "3-purple-striped-squiggle) or an image and three card numbers"
        )
    cards = [parse_card(text) for text in args.items]
    check = explain(*cards)
    _print_claim(check)
    return EXIT_OK if check.valid else EXIT_NO


def cmd_odds(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    if not 3 <= args.cards <= len(variant.deck):
        raise SetvisionError(f"--cards must be 3..{len(variant.deck)} for the {variant.name} deck")
    if args.trials < 1:
        raise SetvisionError("--trials must be at least 1")
    odds = simulate(args.cards, args.trials, variant, seed=args.seed)
    low, high = odds.interval()
    print(f"deck: {variant.name} ({len(variant.deck)} cards), {odds.sets_in_deck} sets in all")
    print(
        f"{odds.trials} random layouts of {odds.layout_size} cards: "
        f"{odds.without_set} without a set"
    )
    if odds.without_set:
        print(
            f"  p(no set) = {odds.probability:.5f}  (about 1 in {1 / odds.probability:,.0f}); "
            f"95% interval {low:.5f}..{high:.5f}"
        )
    else:
        print(f"  p(no set) = 0; 95% interval 0..{high:.6f}")
    if odds.layout_size > variant.largest_set_free:
        print(f"  (exactly 0: any {variant.largest_set_free + 1} cards of this deck hold a set)")
    return EXIT_OK


# ---------------------------------------------------------------- parser and entry point


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="setvision", description="Find every SET on a photo of real cards."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug log and tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    solve = sub.add_parser("solve", help="every set among cards given as text")
    solve.add_argument("cards", nargs="*", metavar="CARD", help="e.g. 2-red-striped-oval")
    solve.add_argument("--json", action="store_true", help="one JSON object")
    solve.add_argument("--stock", type=int, default=None, help="cards left in the stock")
    solve.add_argument("--variant", default="standard", choices=sorted(VARIANTS))
    solve.set_defaults(handler=cmd_solve)

    check = sub.add_parser("check", help="is a claimed set valid? (three cards as text)")
    check.add_argument("items", nargs="+", metavar="CARD")
    check.set_defaults(handler=cmd_check)

    odds = sub.add_parser("odds", help="how often a random layout holds no set")
    odds.add_argument("--cards", type=int, default=12)
    odds.add_argument("--trials", type=int, default=200_000)
    odds.add_argument("--variant", default="standard", choices=sorted(VARIANTS))
    odds.add_argument("--seed", type=int, default=0)
    odds.set_defaults(handler=cmd_odds)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed its usage message
        return int(exit_.code or 0)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.handler(args)
    except SetvisionError as error:
        print(f"setvision: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("setvision: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug: one line for the user, the traceback with -v
        if args.verbose:
            raise
        print(
            f"setvision: internal error: {type(error).__name__}: {error} (run with -v for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
