"""The game of SET without images: cards (or their text) go in; sets, checked claims, the
dealer's rules and variants, odds and game replays come out."""

from setvision.solver.cards import ATTRIBUTES, VALUES, Card, parse_card, parse_cards
from setvision.solver.errors import CardParseError, SetvisionError
from setvision.solver.sets import AttributeCheck, ClaimCheck, explain, find_sets, is_set, third_card
from setvision.solver.variants import BEGINNER, STANDARD, VARIANTS, Variant, get_variant

__all__ = [
    "ATTRIBUTES",
    "BEGINNER",
    "STANDARD",
    "VALUES",
    "VARIANTS",
    "AttributeCheck",
    "Card",
    "CardParseError",
    "ClaimCheck",
    "SetvisionError",
    "Variant",
    "explain",
    "find_sets",
    "get_variant",
    "is_set",
    "parse_card",
    "parse_cards",
    "third_card",
]
