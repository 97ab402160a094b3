"""Decide every card's identity jointly: a deck holds each card once."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from setvision.solver import ATTRIBUTES, Card

_CODES = np.array([Card.from_index(i).codes for i in range(81)])  # (81, 4)


def identity_log_probabilities(probabilities: dict[str, np.ndarray]) -> np.ndarray:
    """(n_cards, 81) log-probability of each identity, attributes taken as independent."""
    n = len(next(iter(probabilities.values())))
    total = np.zeros((n, 81))
    for column, attribute in enumerate(ATTRIBUTES):
        p = np.clip(np.asarray(probabilities[attribute], dtype=np.float64), 1e-9, 1.0)
        total += np.log(p)[:, _CODES[:, column]]
    return total


def settle(probabilities: dict[str, np.ndarray], prior: np.ndarray | None = None) -> list[Card]:
    """The most probable assignment of distinct identities to the cards.

    Reading each card alone can give two cards the same identity; then the one whose
    reading is less sure moves to its next most probable identity. With more than 81 cards
    (two decks) the constraint cannot hold and cards are read independently. ``prior``,
    (n_cards, 81), is added to the log-probabilities (live video uses it to keep the
    identities already shown unless the evidence clearly moves).
    """
    log_p = identity_log_probabilities(probabilities)
    if prior is not None:
        log_p = log_p + prior
    if len(log_p) == 0:
        return []
    independent = log_p.argmax(axis=1)
    if len(log_p) > 81 or len(set(independent.tolist())) == len(independent):
        return [Card.from_index(int(i)) for i in independent]
    rows, columns = linear_sum_assignment(-log_p)
    chosen = np.empty(len(log_p), dtype=int)
    chosen[rows] = columns
    return [Card.from_index(int(i)) for i in chosen]
