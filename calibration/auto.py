"""Per-photo calibration: the cards of one layout share a deck and a light.

Within a layout the three colours form clusters in feature space. The
cards the general model reads confidently anchor those clusters for this photo; every card it
is unsure of is then read again by how close it lies to each anchored cluster. A deck whose red
looks orange, or whose purple looks near-black, is thereby read against its own confident
cards. Confident readings are never changed, and a value with no anchored cluster in the
layout (all cards red is legal) keeps the general reading's weight, so a card far from every
anchored cluster is not forced into one.
"""

from __future__ import annotations

import numpy as np
from setvision.vision.read.features import CardFeatures

#: The features each calibrated attribute is clustered on, and a floor on their spread.
#: Fill is left to the general model: measured leave-one-source-out, clustering the fill
#: features per photo moved more right readings of striped cards to "open" than it fixed.
CLUSTER_FEATURES: dict[str, tuple[tuple[str, ...], float]] = {
    "color": (("ink_a", "ink_b", "share_b", "share_g", "share_r"), 0.02),
}
ANCHOR = 0.9  # a reading this sure anchors its value's cluster
MIN_ANCHORS = 2  # cards needed to place a cluster
ABSENT_DISTANCE = 2.5  # a value without a cluster is as likely as one this many spreads away


def _refine(x: np.ndarray, prior: np.ndarray, floor: float) -> np.ndarray:
    """New probabilities for the unsure cards, from their distance to anchored clusters."""
    best = prior.argmax(axis=1)
    anchored = prior.max(axis=1) >= ANCHOR
    unsure = ~anchored
    if not unsure.any():
        return prior
    present = np.array([(anchored & (best == k)).sum() >= MIN_ANCHORS for k in range(3)])
    if present.sum() < 2:
        return prior  # one cluster alone says nothing about where the others lie
    means = np.zeros((3, x.shape[1]))
    residuals = []
    for k in np.nonzero(present)[0]:
        members = x[anchored & (best == k)]
        means[k] = members.mean(axis=0)
        residuals.append(members - means[k])
    spread = np.sqrt(np.maximum(np.concatenate(residuals).var(axis=0), floor**2))
    distance = (((x[:, None, :] - means[None]) / spread) ** 2).sum(axis=2)
    distance[:, ~present] = ABSENT_DISTANCE**2 * x.shape[1]
    log_post = np.log(np.clip(prior, 1e-6, 1.0)) - 0.5 * distance
    log_post -= log_post.max(axis=1, keepdims=True)
    posterior = np.exp(log_post)
    posterior /= posterior.sum(axis=1, keepdims=True)
    refined = prior.copy()
    refined[unsure] = posterior[unsure]
    return refined


def calibrate_layout(
    features: list[CardFeatures], probabilities: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Probabilities of unsure cards refined by the layout's own colour and fill clusters."""
    refined = dict(probabilities)
    for attribute, (names, floor) in CLUSTER_FEATURES.items():
        x = np.array([[f.values[name] for name in names] for f in features], dtype=np.float64)
        refined[attribute] = _refine(x, np.asarray(probabilities[attribute], float), floor)
    return refined
