"""Attribute probabilities from card features, with models stored as plain JSON.

The models are fitted with scikit-learn (see ``vision.training``) and exported as arrays, so
the shipped file loads offline, deterministically and without pickles that break between
library versions; prediction here is a few numpy operations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from setvision.solver import ATTRIBUTES, VALUES
from setvision.solver.errors import SetvisionError
from setvision.vision.read.features import FEATURE_GROUPS, CardFeatures

MODEL_FORMAT = 1
DEFAULT_MODEL = "default.json"


class ModelError(SetvisionError):
    """A model file is missing, damaged or of another format."""


@dataclass(frozen=True)
class SoftmaxModel:
    """Standardised features, a linear map and a softmax: multinomial logistic regression."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (3, n_features)
    intercept: np.ndarray  # (3,)

    def decision(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale) @ self.coef.T + self.intercept

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = self.decision(x)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def to_dict(self) -> dict:
        return {
            "kind": "softmax",
            "features": list(self.features),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> SoftmaxModel:
        return cls(
            tuple(data["features"]),
            np.asarray(data["mean"], float),
            np.asarray(data["scale"], float),
            np.asarray(data["coef"], float),
            np.asarray(data["intercept"], float),
        )


@dataclass(frozen=True)
class ForestModel:
    """An ensemble of decision trees stored as flat node arrays (all trees side by side)."""

    features: tuple[str, ...]
    roots: np.ndarray  # (n_trees,) index of each tree's root node
    feature: np.ndarray  # (n_nodes,) feature index, -1 at a leaf
    threshold: np.ndarray  # (n_nodes,)
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray  # (n_nodes, 3) class probabilities at leaves
    depth: int

    def leaf_values(self, x: np.ndarray) -> np.ndarray:
        """(n_samples, n_trees, 3): each tree's leaf probabilities for each sample."""
        nodes = np.broadcast_to(self.roots, (len(x), len(self.roots))).copy()
        rows = np.arange(len(x))[:, None]
        for _ in range(self.depth):
            feature = self.feature[nodes]
            leaf = feature < 0
            if leaf.all():
                break
            go_left = x[rows, np.where(leaf, 0, feature)] <= self.threshold[nodes]
            nodes = np.where(leaf, nodes, np.where(go_left, self.left[nodes], self.right[nodes]))
        return self.value[nodes]

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return self.leaf_values(x).mean(axis=1)

    def to_dict(self) -> dict:
        return {
            "kind": "forest",
            "features": list(self.features),
            "roots": self.roots.tolist(),
            "feature": self.feature.tolist(),
            "threshold": [round(float(t), 6) for t in self.threshold],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": np.round(self.value, 4).tolist(),
            "depth": self.depth,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ForestModel:
        return cls(
            tuple(data["features"]),
            np.asarray(data["roots"], np.int64),
            np.asarray(data["feature"], np.int64),
            np.asarray(data["threshold"], float),
            np.asarray(data["left"], np.int64),
            np.asarray(data["right"], np.int64),
            np.asarray(data["value"], float),
            int(data["depth"]),
        )


_KINDS = {"softmax": SoftmaxModel, "forest": ForestModel}


@dataclass(frozen=True)
class _FusedForests:
    """Several forests over one shared feature vector, as one array of nodes."""

    features: tuple[str, ...]
    forest: ForestModel  # feature indices point into ``features``
    spans: dict[str, tuple[int, int]]  # each attribute's range of trees

    @classmethod
    def build(cls, forests: dict[str, ForestModel]) -> _FusedForests:
        names = tuple(dict.fromkeys(n for f in forests.values() for n in f.features))
        roots, feature, threshold, left, right, value, spans = [], [], [], [], [], [], {}
        offset = trees = 0
        for attribute, forest in forests.items():
            to_global = np.array([names.index(n) for n in forest.features])
            leaf = forest.feature < 0
            roots.append(forest.roots + offset)
            feature.append(np.where(leaf, -1, to_global[np.where(leaf, 0, forest.feature)]))
            threshold.append(forest.threshold)
            left.append(np.where(leaf, -1, forest.left + offset))
            right.append(np.where(leaf, -1, forest.right + offset))
            value.append(forest.value)
            spans[attribute] = (trees, trees + len(forest.roots))
            offset += len(forest.feature)
            trees += len(forest.roots)
        fused = ForestModel(
            names,
            np.concatenate(roots),
            np.concatenate(feature),
            np.concatenate(threshold),
            np.concatenate(left),
            np.concatenate(right),
            np.concatenate(value),
            max(f.depth for f in forests.values()),
        )
        return cls(names, fused, spans)

    def predict(self, x: np.ndarray) -> dict[str, np.ndarray]:
        leaves = self.forest.leaf_values(x)  # (n, trees, 3)
        return {a: leaves[:, start:end].mean(axis=1) for a, (start, end) in self.spans.items()}


@dataclass(frozen=True)
class Tempering:
    """Makes raw probabilities honest on decks never seen in training.

    Fitted on out-of-source predictions: ``p ** (1 / temperature)`` renormalised, then mixed
    with a uniform ``floor`` so that no reading is ever certain.
    """

    temperature: float = 1.0
    floor: float = 0.0

    def apply(self, p: np.ndarray) -> np.ndarray:
        logits = np.log(np.clip(p, 1e-9, 1.0)) / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        tempered = np.exp(logits)
        tempered /= tempered.sum(axis=1, keepdims=True)
        return (1 - self.floor) * tempered + self.floor / p.shape[1]


@dataclass(frozen=True)
class AttributeModels:
    """One model per attribute, and a note of what they were fitted on."""

    models: dict[str, SoftmaxModel | ForestModel]
    trained_on: dict
    tempering: dict[str, Tempering] | None = None

    def predict(self, features: list[CardFeatures]) -> dict[str, np.ndarray]:
        """Per attribute, an (n_cards, 3) array of probabilities in ``VALUES`` order."""
        if not features:
            return {attribute: np.zeros((0, 3)) for attribute in ATTRIBUTES}
        forests = self._fused_forests()
        if forests is not None:
            raw = forests.predict(np.stack([f.vector(forests.features) for f in features]))
        else:
            raw = {
                a: m.predict_proba(np.stack([f.vector(m.features) for f in features]))
                for a, m in self.models.items()
            }
        result = {}
        for attribute in ATTRIBUTES:
            p = raw[attribute]
            if self.tempering and attribute in self.tempering:
                p = self.tempering[attribute].apply(p)
            result[attribute] = p
        return result

    def _fused_forests(self) -> _FusedForests | None:
        """All four forests walked in one pass (a frame's cards are read in one go)."""
        if "_fused" not in self.__dict__:
            forests = [self.models[a] for a in ATTRIBUTES]
            fused = None
            if all(isinstance(m, ForestModel) for m in forests):
                fused = _FusedForests.build(dict(zip(ATTRIBUTES, forests)))
            object.__setattr__(self, "_fused", fused)
        return self.__dict__["_fused"]

    def to_json(self) -> str:
        payload = {
            "format": MODEL_FORMAT,
            "values": {a: list(VALUES[a]) for a in ATTRIBUTES},
            "trained_on": self.trained_on,
            "attributes": {a: self.models[a].to_dict() for a in ATTRIBUTES},
            "tempering": {
                a: {"temperature": t.temperature, "floor": t.floor}
                for a, t in (self.tempering or {}).items()
            },
        }
        return json.dumps(payload, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, name: str = "model") -> AttributeModels:
        try:
            payload = json.loads(text)
            if payload.get("format") != MODEL_FORMAT:
                raise ModelError(f"{name}: model format {payload.get('format')!r} is not supported")
            models = {}
            for attribute in ATTRIBUTES:
                data = payload["attributes"][attribute]
                if payload["values"][attribute] != list(VALUES[attribute]):
                    raise ModelError(f"{name}: values of {attribute} do not match this version")
                models[attribute] = _KINDS[data["kind"]].from_dict(data)
                unknown = set(models[attribute].features) - set(FEATURE_GROUPS_ALL)
                if unknown:
                    raise ModelError(f"{name}: unknown features {sorted(unknown)}")
            tempering = {
                a: Tempering(float(t["temperature"]), float(t["floor"]))
                for a, t in payload.get("tempering", {}).items()
            }
            return cls(models, payload.get("trained_on", {}), tempering or None)
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"{name}: not a valid setvision model ({error})") from None


FEATURE_GROUPS_ALL = tuple(name for names in FEATURE_GROUPS.values() for name in names)


def load_models(path: str | Path | None = None) -> AttributeModels:
    """The shipped model, or the one at ``path``."""
    if path is None:
        resource = resources.files("setvision.vision") / "models" / DEFAULT_MODEL
        if not resource.is_file():
            raise ModelError("the shipped model is missing: run `setvision train` to build it")
        return AttributeModels.from_json(resource.read_text(), DEFAULT_MODEL)
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    return AttributeModels.from_json(path.read_text(), str(path))
