"""Per-photo calibration: the cards of one layout share a deck and a light.

Within a layout the three colours (and the three fills) form clusters in feature space. Each
attribute's clusters are fitted to this photo, starting from the general model's reading,
and every card is then read relative to the clusters of its own photo, which fixes decks
whose red looks orange or whose purple looks near-black. Values missing from the layout
(all cards red is legal) keep the general reading: a card far from every cluster that is
present is not forced into one.
"""

from __future__ import annotations

import numpy as np

from vision.features import CardFeatures

#: The features each calibrated attribute is clustered on, and a floor on their spread.
CLUSTER_FEATURES: dict[str, tuple[tuple[str, ...], float]] = {
    "color": (("ink_a", "ink_b", "share_b", "share_g", "share_r"), 0.02),
    "shading": (("inside_ink", "inside_ratio"), 0.03),
}
MIN_CARDS = 6  # fewer cards than this say too little about the photo
PRESENT = 1.5  # a value is present in the layout when about this many cards read as it
ABSENT_DISTANCE = 2.5  # an absent value is as likely as a cluster this many spreads away
ROUNDS = 4


def _refine(x: np.ndarray, prior: np.ndarray, floor: float) -> np.ndarray:
    """Posterior probabilities from the prior reading and this photo's clusters."""
    posterior = prior.copy()
    for _ in range(ROUNDS):
        weight = posterior.sum(axis=0)
        present = weight >= PRESENT
        if present.sum() < 2:
            return prior  # one cluster tells nothing about the boundaries between values
        means = (posterior.T @ x) / np.maximum(weight[:, None], 1e-9)
        residual = x[:, None, :] - means[None, :, :]
        variance = (posterior[:, :, None] * residual**2)[:, present].sum(axis=(0, 1)) / len(x)
        spread = np.sqrt(np.maximum(variance, floor**2))
        distance = ((residual / spread) ** 2).sum(axis=2)  # (n, 3) squared, in spreads
        distance[:, ~present] = ABSENT_DISTANCE**2 * x.shape[1] / 2
        separation = ((means[present][:, None] - means[present][None]) / spread) ** 2
        if (separation.sum(axis=2) + np.eye(present.sum()) * 1e9).min() < 4.0:
            return prior  # clusters overlap: the photo cannot tell these values apart
        log_like = -0.5 * distance
        log_post = np.log(np.clip(prior, 1e-6, 1.0)) + log_like
        log_post -= log_post.max(axis=1, keepdims=True)
        posterior = np.exp(log_post)
        posterior /= posterior.sum(axis=1, keepdims=True)
    return posterior


def calibrate_layout(
    features: list[CardFeatures], probabilities: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Probabilities refined by the layout's own colour and fill clusters."""
    if len(features) < MIN_CARDS:
        return probabilities
    refined = dict(probabilities)
    for attribute, (names, floor) in CLUSTER_FEATURES.items():
        x = np.array([[f.values[name] for name in names] for f in features], dtype=np.float64)
        refined[attribute] = _refine(x, np.asarray(probabilities[attribute], float), floor)
    return refined
