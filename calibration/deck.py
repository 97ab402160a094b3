"""Explicit calibration: a profile of one deck under one light, fitted on cards of known identity.

For colour and shading (``CALIBRATED``) the profile keeps, per value, the mean of that
attribute's features (``FEATURE_GROUPS``) over the known cards, and one spread per feature
pooled over the values. Reading a card with the profile multiplies the general model's
probabilities by how likely the card's features are under each value of this deck, roughly
``P_general * exp(-0.5 * weight * d**2)`` with ``d`` in the profile's spreads. Three guards
keep a profile from one photo from hurting another photo of the same deck:

- each feature counts as a Student t, so a card far from every mean (another light, a blurred
  photo) is not pushed hard towards any of them;
- the profile shifts the odds between two values by at most ``MAX_ODDS``;
- a value the known cards did not show keeps the general model's share.

Everything here is plain numbers in and out: no files, no clock. ``calibration.profiles``
stores profiles and builds readers with them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from setvision.solver import ATTRIBUTES, VALUES, Card
from setvision.solver.errors import SetvisionError
from setvision.vision.read.features import FEATURE_GROUPS, CardFeatures

PROFILE_FORMAT = 1
#: The attributes a profile refines. The number of symbols is counted, not calibrated; shape
#: is printed geometry, the same in every deck, and its features change with the camera's
#: angle from photo to photo: refining it per deck cost more readings than it fixed
#: (`setvision eval --calibration`), so it is left to the general model.
CALIBRATED = ("color", "shading")
MIN_CARDS = 6  # per photo
MIN_PER_VALUE = 2  # cards of a value needed to place its mean
#: A spread is never below this share of the feature's spread over all the known cards:
#: a few cards of one value may agree by chance on a feature that varies on other photos.
SPREAD_FLOOR = 0.25
#: d**2 summed over a group counts as this many independent features (they are correlated).
EFFECTIVE_FEATURES = 1.0
TAIL = 3.0  # degrees of freedom of each feature's Student t
MAX_ODDS = 10.0  # the profile alone never makes one value more than this much likelier


class CalibrationError(SetvisionError):
    """The photos or identities given cannot make a profile (nothing is written)."""


def attribute_name(attribute: str) -> str:
    return "colour" if attribute == "color" else attribute


@dataclass(frozen=True)
class AttributeProfile:
    """The deck's values of one attribute: per-value means and pooled spreads of its features.

    ``means`` is (n_values, n_features) in ``values`` order; ``spread`` is (n_features,) > 0.
    """

    attribute: str
    features: tuple[str, ...]
    values: tuple[str, ...]
    counts: tuple[int, ...]
    means: np.ndarray
    spread: np.ndarray

    def __post_init__(self) -> None:
        unknown = set(self.values) - set(VALUES[self.attribute])
        if unknown or len(self.values) < 2 or len(self.counts) != len(self.values):
            raise ValueError(
                f"{self.attribute}: needs two or more of {VALUES[self.attribute]} with a count "
                f"each, got {list(self.values)} and {list(self.counts)}"
            )
        shape = (len(self.values), len(self.features))
        if np.shape(self.means) != shape:
            raise ValueError(f"means must have shape {shape}, got {np.shape(self.means)}")
        if not np.all(np.isfinite(self.means)):
            raise ValueError(f"{self.attribute}: means must be finite numbers")
        spread = np.asarray(self.spread)
        if (
            spread.shape != (len(self.features),)
            or not np.all(spread > 0)
            or not np.all(np.isfinite(spread))
        ):
            raise ValueError(
                f"spread must have shape ({len(self.features)},) and be positive and finite"
            )

    def log_likelihood(self, x: np.ndarray) -> np.ndarray:
        """(n_cards, n_values) log likelihoods, ``values`` order, of (n_cards, n_features) ``x``."""
        z2 = ((x[:, None, :] - self.means[None]) / self.spread) ** 2
        per_feature = 0.5 * (TAIL + 1) * np.log1p(z2 / TAIL)
        return -(EFFECTIVE_FEATURES / len(self.features)) * per_feature.sum(axis=2)

    def refine(self, x: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
        """(n_cards, 3) probabilities with this deck's likelihoods weighed in."""
        p = np.asarray(probabilities, dtype=np.float64).copy()
        known = [VALUES[self.attribute].index(v) for v in self.values]
        likelihood = self.log_likelihood(x)
        likelihood = np.maximum(
            likelihood - likelihood.max(axis=1, keepdims=True), -np.log(MAX_ODDS)
        )
        log_post = np.log(np.clip(p[:, known], 1e-6, 1.0)) + likelihood
        posterior = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        posterior /= posterior.sum(axis=1, keepdims=True)
        p[:, known] = posterior * p[:, known].sum(axis=1, keepdims=True)
        return p

    def to_dict(self) -> dict:
        return {
            "features": list(self.features),
            "values": list(self.values),
            "counts": list(self.counts),
            "means": np.round(self.means, 6).tolist(),
            "spread": np.round(self.spread, 6).tolist(),
        }

    @classmethod
    def from_dict(cls, attribute: str, data: dict) -> AttributeProfile:
        return cls(
            attribute,
            tuple(str(n) for n in data["features"]),
            tuple(str(v) for v in data["values"]),
            tuple(int(c) for c in data["counts"]),
            np.asarray(data["means"], dtype=np.float64),
            np.asarray(data["spread"], dtype=np.float64),
        )


@dataclass(frozen=True)
class FitRecord:
    """What a profile was fitted on: photos, cards, cards per value, date, model fingerprint."""

    photos: tuple[str, ...]
    cards: int
    values: dict[str, dict[str, int]]
    date: str
    model: str

    def to_dict(self) -> dict:
        return {
            "photos": list(self.photos),
            "cards": self.cards,
            "values": self.values,
            "date": self.date,
            "model": self.model,
        }

    @classmethod
    def from_dict(cls, data: dict) -> FitRecord:
        return cls(
            tuple(str(p) for p in data["photos"]),
            int(data["cards"]),
            {str(a): {str(v): int(n) for v, n in c.items()} for a, c in data["values"].items()},
            str(data["date"]),
            str(data["model"]),
        )


@dataclass(frozen=True)
class DeckProfile:
    """A named deck profile: the attributes it refines, why others are not, what it saw.

    Calling it is an ``Adjuster`` (``vision.pipeline``): features and the general model's
    probabilities in, refined probabilities out, cards in the same order.
    """

    name: str
    attributes: dict[str, AttributeProfile]
    fitted_on: FitRecord
    not_refined: dict[str, str] = field(default_factory=dict)

    def __call__(
        self, features: list[CardFeatures], probabilities: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        adjusted = dict(probabilities)
        for attribute, profile in self.attributes.items():
            x = np.array([[f.values[n] for n in profile.features] for f in features], float)
            adjusted[attribute] = profile.refine(
                x.reshape(len(features), -1), probabilities[attribute]
            )
        return adjusted

    def to_dict(self) -> dict:
        return {
            "format": PROFILE_FORMAT,
            "name": self.name,
            "fitted_on": self.fitted_on.to_dict(),
            "attributes": {a: p.to_dict() for a, p in self.attributes.items()},
            "not_refined": self.not_refined,
        }

    @classmethod
    def from_dict(cls, data: dict) -> DeckProfile:
        """A profile from its stored form; ``ValueError``, ``KeyError`` or ``TypeError`` if not."""
        if not isinstance(data, dict):
            raise ValueError(f"a JSON object is needed, not {type(data).__name__}")
        if data.get("format") != PROFILE_FORMAT:
            raise ValueError(f"profile format {data.get('format')!r} is not supported")
        attributes = {
            str(a): AttributeProfile.from_dict(str(a), p) for a, p in data["attributes"].items()
        }
        for attribute, profile in attributes.items():
            if attribute not in CALIBRATED:
                raise ValueError(f"{attribute} is not calibrated by this version")
            missing = set(profile.features) - set(FEATURE_GROUPS[attribute])
            if missing:
                raise ValueError(f"features this version lacks: {sorted(missing)}")
        return cls(
            str(data["name"]),
            attributes,
            FitRecord.from_dict(data["fitted_on"]),
            {str(a): str(r) for a, r in data.get("not_refined", {}).items()},
        )


@dataclass(frozen=True)
class KnownPhoto:
    """The cards of one photo in reading order, measured, with the identities the user gave."""

    name: str
    features: list[CardFeatures]
    cards: list[Card]

    def __post_init__(self) -> None:
        if len(self.features) != len(self.cards):
            raise ValueError(
                f"{len(self.features)} measured cards but {len(self.cards)} identities"
            )


def check_found(name: str, found: int) -> None:
    """A photo to calibrate on must show at least ``MIN_CARDS`` cards."""
    if found == 0:
        raise CalibrationError(f"{name}: no cards found; photograph {MIN_CARDS} or more cards")
    if found < MIN_CARDS:
        raise CalibrationError(
            f"{name}: only {found} cards found; calibration needs {MIN_CARDS} or more per photo"
        )


def check_given(name: str, found: int, given: list[Card]) -> None:
    """The identities given for a photo match its cards one to one (count, no repeats)."""
    if len(given) != found:
        raise CalibrationError(
            f"{name}: {found} cards found but {len(given)} given; name every card in the "
            "order `setvision detect` numbers them"
        )
    repeated = repeated_card(given)
    if repeated:
        card, first, second = repeated
        raise CalibrationError(
            f"{name}: {card} is given twice (cards {first} and {second}); a deck holds each "
            "card once"
        )


def repeated_card(cards: list[Card]) -> tuple[Card, int, int] | None:
    """The first card named twice, with both numbers (1-based), or None."""
    seen: dict[Card, int] = {}
    for number, card in enumerate(cards, 1):
        if card in seen:
            return card, seen[card], number
        seen[card] = number
    return None


def _lacking(attribute: str, counts: Counter) -> str:
    """E.g. ``colour: 2 cards or more of only red; none of green, purple has 2``."""
    enough = [v for v in VALUES[attribute] if counts[v] >= MIN_PER_VALUE]
    short = [v for v in VALUES[attribute] if counts[v] < MIN_PER_VALUE]
    have = f"only {enough[0]} has" if enough else "no value has"
    return (
        f"{attribute_name(attribute)}: {have} {MIN_PER_VALUE} cards or more "
        f"(too few {', '.join(short)})"
    )


def fit_attribute(attribute: str, x: np.ndarray, values: list[str]) -> AttributeProfile:
    """Per-value means and pooled spreads of (n_cards, n_features) ``x`` with known ``values``."""
    counts = Counter(values)
    kept = [v for v in VALUES[attribute] if counts[v] >= MIN_PER_VALUE]
    if len(kept) < 2:
        raise CalibrationError(_lacking(attribute, counts))
    labels = np.array(values)
    used = np.isin(labels, kept)
    means = np.array([x[labels == v].mean(axis=0) for v in kept])
    residual = x[used] - means[[kept.index(v) for v in labels[used]]]
    pooled = (residual**2).sum(axis=0) / max(int(used.sum()) - len(kept), 1)
    floor = np.maximum(SPREAD_FLOOR * x[used].std(axis=0), 1e-6)
    spread = np.sqrt(np.maximum(pooled, floor**2))
    names = FEATURE_GROUPS[attribute]
    return AttributeProfile(attribute, names, tuple(kept), tuple(counts[v] for v in kept),
                            means, spread)  # fmt: skip


def fit_profile(name: str, photos: list[KnownPhoto], date: str, model: str) -> DeckProfile:
    """A profile from the known cards of every photo.

    Each photo must show ``MIN_CARDS`` cards. An attribute is refined when two of its values
    have ``MIN_PER_VALUE`` cards each; the others are left to the general model. Cards of one
    colour only are refused: shading and shape measured on one colour do not describe the
    deck's other colours, and colour is what calibration is most for.
    """
    for photo in photos:
        check_found(photo.name, len(photo.features))
    features = [f for p in photos for f in p.features]
    cards = [c for p in photos for c in p.cards]
    if not features:
        raise CalibrationError("no photos to calibrate on")
    attributes, not_refined = {}, {}
    for attribute in CALIBRATED:
        names = FEATURE_GROUPS[attribute]
        x = np.array([[f.values[n] for n in names] for f in features], dtype=np.float64)
        try:
            attributes[attribute] = fit_attribute(attribute, x, [c.value(attribute) for c in cards])
        except CalibrationError as error:
            not_refined[attribute] = str(error)
    if "color" in not_refined:
        raise CalibrationError(f"too few values to calibrate: {not_refined['color']}")
    counts = {a: Counter(c.value(a) for c in cards) for a in ATTRIBUTES}
    values = {a: {str(v): counts[a][v] for v in VALUES[a] if counts[a][v]} for a in ATTRIBUTES}
    record = FitRecord(tuple(p.name for p in photos), len(cards), values, date, model)
    return DeckProfile(name, attributes, record, not_refined)
