"""How likely a candidate is a SET card: a forest learned from labelled outlines.

The model is fitted by ``setvision train-finder`` (``vision.learn.find_training``) on the
candidates of every labelled photo, each marked card or not by its overlap with the labels,
and stored as plain JSON arrays (``vision/models/finder.json``), like the attribute models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from setvision.solver.errors import SetvisionError
from setvision.vision.find.describe import CONTEXT, FEATURES, with_context
from setvision.vision.read.classify import ForestModel

FINDER_MODEL = "finder.json"
FINDER_FORMAT = 2


class FinderModelError(SetvisionError):
    """The card finder's model is missing, damaged or was made for other features."""


@dataclass(frozen=True)
class CardnessModel:
    """A forest over ``FEATURES`` and the probability above which a candidate is a card."""

    forest: ForestModel
    accept: float
    work_long_side: int
    trained_on: dict
    #: below ``accept`` but at least this: a card may be there. Chosen held out (stop 45,
    #: `eval --find --loso --read`): 0.3 names a third fewer false places than 0.2 beside
    #: tables read complete and leaves no more missed cards unsaid; 0.4 leaves one more
    doubt: float = 0.3
    #: a photo goes to the previous finder when paper of at least this share of a typical card
    #: is unexplained, or a candidate of at least this probability is in doubt (both learned
    #: from held-out photos; see ``vision.learn.find_training.choose_recheck``)
    unexplained: float = 0.4
    recheck: float = 0.2
    #: ... and that paper holds at least this share of a typical card's area in coloured ink
    #: (symbols: a card missed, not a blank sheet)
    unexplained_ink: float = 0.0
    #: ... or the card net (``card_net``) sees, at this interior probability, a card the fast
    #: makers' cards do not explain (inf: the net is not asked)
    net_interior: float = float("inf")
    #: the second look, over ``FEATURES`` and ``CONTEXT`` (None: the first look decides)
    context_forest: ForestModel | None = None
    #: how closely a candidate follows the card it lies on (its expected intersection over
    #: union with the card's labelled outline), over ``FEATURES``: of several outlines of one
    #: card, the closest is kept (None: the likeliest card is kept)
    fit_forest: ForestModel | None = None

    def first_look(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        return self.forest.predict_proba(np.nan_to_num(x, nan=-1e3))[:, 1]

    def probability(self, x: np.ndarray, first: np.ndarray | None = None) -> np.ndarray:
        """Each candidate's probability of being a card; ``x`` holds every candidate of one
        photo (the second look compares them), ``first`` the first look's if known."""
        if len(x) == 0:
            return np.zeros(0)
        first = self.first_look(x) if first is None else first
        if self.context_forest is None:
            return first
        x = np.nan_to_num(with_context(x, first), nan=-1e3)
        return self.context_forest.predict_proba(x)[:, 1]

    def fit(self, x: np.ndarray) -> np.ndarray:
        """Each candidate's expected overlap with the card it lies on (``fit_forest``)."""
        if len(x) == 0 or self.fit_forest is None:
            return np.zeros(len(x))
        return self.fit_forest.predict_proba(np.nan_to_num(x, nan=-1e3))[:, 1]

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FINDER_FORMAT,
                "features": list(FEATURES),
                "accept": self.accept,
                "doubt": self.doubt,
                "unexplained": self.unexplained if np.isfinite(self.unexplained) else None,
                "recheck": self.recheck,
                "unexplained_ink": self.unexplained_ink,
                "net_interior": self.net_interior if np.isfinite(self.net_interior) else None,
                "work_long_side": self.work_long_side,
                "trained_on": self.trained_on,
                "forest": self.forest.to_dict(),
                "context": list(CONTEXT),
                "context_forest": None
                if self.context_forest is None
                else self.context_forest.to_dict(),
                "fit_forest": None if self.fit_forest is None else self.fit_forest.to_dict(),
            }
        )


def parse_model(text: str, name: str) -> CardnessModel:
    """A model from its JSON text; every flaw is one ``FinderModelError`` naming the file."""
    try:
        data = json.loads(text)
        if (
            data.get("format") != FINDER_FORMAT
            or tuple(data["features"]) != FEATURES
            or tuple(data["context"]) != CONTEXT
        ):
            raise FinderModelError(
                f"{name}: made for other finder features: retrain with `setvision train-finder`"
            )
        forest = ForestModel.from_dict(data["forest"])
        context = data["context_forest"]
        context_forest = None if context is None else ForestModel.from_dict(context)
        fit = data.get("fit_forest")
        fit_forest = None if fit is None else ForestModel.from_dict(fit)
        valid = (
            _forest_fits(forest, len(FEATURES))
            and (context_forest is None or _forest_fits(context_forest, len(FEATURES + CONTEXT)))
            and (fit_forest is None or _forest_fits(fit_forest, len(FEATURES)))
            and 0.0 < float(data["doubt"]) <= float(data["accept"]) < 1.0
            and float(data["recheck"]) > 0.0
            and (data["unexplained"] is None or float(data["unexplained"]) > 0)
            and 64 <= int(data["work_long_side"]) <= 4096
            and 0.0 <= float(data.get("unexplained_ink", 0.0)) < 10.0
            and (data.get("net_interior") is None or 0.0 < float(data["net_interior"]) < 1.0)
        )
        if not valid:
            raise FinderModelError(f"{name}: the finder model's arrays do not fit together")
        return CardnessModel(
            forest,
            float(data["accept"]),
            int(data["work_long_side"]),
            data.get("trained_on", {}),
            float(data["doubt"]),
            float("inf") if data["unexplained"] is None else float(data["unexplained"]),
            float(data["recheck"]),
            unexplained_ink=float(data.get("unexplained_ink", 0.0)),
            net_interior=float(data.get("net_interior") or "inf"),
            context_forest=context_forest,
            fit_forest=fit_forest,
        )
    except FinderModelError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, IndexError):
        raise FinderModelError(f"{name}: not a card finder model") from None


def _forest_fits(forest: ForestModel, features: int) -> bool:
    """Whether a forest's arrays fit together: children, features and leaves in range."""
    nodes = len(forest.feature)
    inner = forest.feature >= 0
    return bool(
        forest.value.ndim == 2
        and forest.value.shape == (nodes, 2)
        and len(forest.threshold) == len(forest.left) == len(forest.right) == nodes
        and (forest.feature < features).all()
        and ((forest.left[inner] > 0) & (forest.left[inner] < nodes)).all()
        and ((forest.right[inner] > 0) & (forest.right[inner] < nodes)).all()
        and ((forest.roots >= 0) & (forest.roots < nodes)).all()
        and 1 <= forest.depth <= 64
        and np.isfinite(forest.value).all()
        and ((forest.value >= 0) & (forest.value <= 1)).all()
    )


@lru_cache(maxsize=4)
def load_cardness(path: str | None = None) -> CardnessModel:
    """The shipped finder model, or the one at ``path``."""
    if path is None:
        resource = resources.files("setvision.vision") / "models" / FINDER_MODEL
        if not resource.is_file():
            raise FinderModelError("the card finder model is missing: run `setvision train-finder`")
        return parse_model(resource.read_text(), FINDER_MODEL)
    if not Path(path).is_file():
        raise FinderModelError(f"{path}: no such finder model")
    return parse_model(Path(path).read_text(), path)
