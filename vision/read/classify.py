"""Attribute probabilities from card features, with models stored as plain JSON.

The models are fitted with scikit-learn (see ``vision.training``) and exported as arrays, so
the shipped file loads offline, deterministically and without pickles that break between
library versions; prediction here is a few numpy operations.

A model file records the fingerprint of the feature code whose output it was fitted on
(``FEATURE_CODE``); one made by other feature code is refused on load: retrain it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from setvision.solver import ATTRIBUTES, VALUES
from setvision.solver.errors import SetvisionError
from setvision.vision.fingerprint import code_fingerprint
from setvision.vision.read.features import FEATURE_GROUPS, CardFeatures

MODEL_FORMAT = 1
DEFAULT_MODEL = "default.json"
#: The modules whose output the models are fitted on: the card warped upright, and the features
#: measured on it. A model file records their fingerprint (``feature_fingerprint``).
FEATURE_CODE = ("setvision.vision.read.rectify", "setvision.vision.read.features")


@lru_cache(maxsize=1)
def feature_fingerprint() -> str:
    """The fingerprint (sha256 hex) of the installed ``FEATURE_CODE``."""
    return code_fingerprint(FEATURE_CODE)


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

    @cached_property
    def _walk(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The nodes as one step of a walk: each node's feature, threshold and children (at
        ``2 * node + goes_left``), a leaf being its own child both ways so that every sample
        can take ``depth`` steps without asking which have stopped."""
        leaf = self.feature < 0
        nodes = np.arange(len(self.feature))
        feature = np.where(leaf, 0, self.feature)
        threshold = np.where(leaf, np.inf, self.threshold)
        children = np.stack([np.where(leaf, nodes, self.right), np.where(leaf, nodes, self.left)])
        return feature, threshold, children.T.ravel()

    def leaf_values(self, x: np.ndarray) -> np.ndarray:
        """(n_samples, n_trees, 3): each tree's leaf probabilities for each sample."""
        feature, threshold, children = self._walk
        nodes = np.broadcast_to(self.roots, (len(x), len(self.roots))).copy()
        starts = (np.arange(len(x)) * x.shape[1])[:, None]
        flat = np.ravel(x)
        for _ in range(self.depth):  # np.take: the same gathers as indexing, faster
            goes_left = np.take(flat, starts + np.take(feature, nodes)) <= np.take(threshold, nodes)
            nodes = np.take(children, 2 * nodes + goes_left)
        return np.take(self.value, nodes, axis=0)

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
        """The model file's text, stamped with the installed feature code's fingerprint: models
        are only ever fitted by this code, or loaded after their stamp matched it."""
        payload = {
            "format": MODEL_FORMAT,
            "feature_fingerprint": feature_fingerprint(),
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
        """Models from a model file's text; any flaw is one ``ModelError`` naming ``name``.

        Everything prediction relies on is checked here, so a damaged file is refused when it
        is loaded, never half-way through reading photos.
        """
        try:
            payload = json.loads(text)
        except ValueError as error:
            raise ModelError(f"{name}: not a valid setvision model (not JSON: {error})") from None
        try:
            return _from_payload(payload)
        except _Flaw as flaw:
            raise ModelError(f"{name}: {flaw}") from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as error:
            detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ModelError(f"{name}: not a valid setvision model ({detail})") from None


#: Deeper trees than this are no forest that ``setvision train`` makes.
MAX_DEPTH = 64


class _Flaw(Exception):
    """A problem found in a model file's content, before the file's name is put in front."""


def _from_payload(payload: object) -> AttributeModels:
    """Build and check the models of a parsed model file; raise ``_Flaw`` at the first flaw."""
    if not isinstance(payload, dict):
        raise _Flaw(f"not a setvision model: a JSON {type(payload).__name__}, not an object")
    if payload.get("format") != MODEL_FORMAT:
        raise _Flaw(f"model format {payload.get('format')!r} is not supported")
    attributes, values = payload.get("attributes"), payload.get("values")
    if not isinstance(attributes, dict) or not isinstance(values, dict):
        raise _Flaw("not a setvision model: no 'attributes' and 'values' objects")
    stamp, current = payload.get("feature_fingerprint"), feature_fingerprint()
    if stamp != current:
        ours = f"this code's {current[:12]}"
        if stamp:
            found = f"made for other feature code ({str(stamp)[:12]}, {ours})"
        else:
            found = f"records no feature code fingerprint ({ours})"
        raise _Flaw(f"{found}: retrain with `setvision train`")
    models = {}
    for attribute in ATTRIBUTES:
        if values.get(attribute) != list(VALUES[attribute]):
            raise _Flaw(f"values of {attribute} do not match this version")
        models[attribute] = _attribute_model(attributes.get(attribute), attribute)
    tempering = _tempering(payload.get("tempering", {}))
    trained_on = payload.get("trained_on", {})
    if not isinstance(trained_on, dict):
        raise _Flaw("'trained_on' is not an object")
    return AttributeModels(models, trained_on, tempering or None)


def _attribute_model(data: object, attribute: str) -> SoftmaxModel | ForestModel:
    """One attribute's model, checked against the features and classes of this version."""
    if not isinstance(data, dict):
        raise _Flaw(f"no model for {attribute}")
    kind = data.get("kind")
    if kind not in _KINDS:
        raise _Flaw(f"model for {attribute} is of unknown kind {kind!r}")
    where = f"{kind} for {attribute}"
    try:
        model = _KINDS[kind].from_dict(data)
    except KeyError as error:
        raise _Flaw(f"{where}: missing {error}") from None
    except (TypeError, ValueError, OverflowError):
        raise _Flaw(f"{where}: a field that is not a number or an array of numbers") from None
    classes = len(VALUES[attribute])
    arrays_flaw = forest_flaw if isinstance(model, ForestModel) else softmax_flaw
    flaw = features_flaw(model.features, attribute) or arrays_flaw(model, classes)
    if flaw:
        raise _Flaw(f"{where}: {flaw}")
    return model


def features_flaw(features: tuple, attribute: str) -> str | None:
    """Why a model's feature names do not fit this version's ``attribute`` features, or None.

    A subset of the attribute's group is accepted: a feature added since training is unused.
    """
    group = FEATURE_GROUPS[attribute]
    unknown = [f for f in features if f not in group]
    if unknown:
        return f"features {unknown} are not {attribute} features of this version (retrain)"
    if not features or len(set(features)) != len(features):
        return "feature names empty or repeated"
    return None


def _finite_in(array: np.ndarray, low: float, high: float) -> bool:
    return bool(np.isfinite(array).all() and (array >= low).all() and (array <= high).all())


def forest_flaw(forest: ForestModel, classes: int) -> str | None:
    """Why a forest's node arrays cannot be walked safely, or None.

    Checked: array shapes, feature and child indices in range (-1 at leaves), finite
    thresholds, leaf probabilities in [0, 1], roots in range, and no tree deeper than ``depth``
    (the walk stops after ``depth`` steps, so a deeper tree would answer with an inner node).
    """
    nodes = len(forest.feature)
    arrays = (forest.feature, forest.threshold, forest.left, forest.right)
    if nodes == 0 or any(a.ndim != 1 or len(a) != nodes for a in arrays):
        return "node arrays empty or of different lengths"
    if forest.value.shape != (nodes, classes):
        return f"value array of shape {forest.value.shape}, expected ({nodes}, {classes})"
    if not _finite_in(forest.value, 0.0, 1.0):
        return "class probabilities not finite or outside [0, 1]"
    leaf = forest.feature < 0
    if (forest.feature < -1).any() or (forest.feature >= len(forest.features)).any():
        return f"feature index out of range (the model has {len(forest.features)} features)"
    if not np.isfinite(forest.threshold[~leaf]).all():
        return "thresholds not finite"
    for children in (forest.left, forest.right):
        inner = children[~leaf]
        if (children[leaf] != -1).any() or (inner < 0).any() or (inner >= nodes).any():
            return "child index out of range"
    if forest.roots.ndim != 1 or len(forest.roots) == 0:
        return "no trees"
    if (forest.roots < 0).any() or (forest.roots >= nodes).any():
        return "root index out of range"
    if not 1 <= forest.depth <= MAX_DEPTH:
        return f"depth {forest.depth} outside 1..{MAX_DEPTH}"
    frontier = np.unique(forest.roots)
    for _ in range(forest.depth):
        frontier = frontier[forest.feature[frontier] >= 0]
        frontier = np.unique(np.concatenate([forest.left[frontier], forest.right[frontier]]))
    if (forest.feature[frontier] >= 0).any():
        return f"trees deeper than the stated depth {forest.depth}"
    return None


def softmax_flaw(model: SoftmaxModel, classes: int) -> str | None:
    """Why a softmax model's arrays do not fit its features and classes, or None."""
    n = len(model.features)
    shapes = {
        "mean": (model.mean, (n,)),
        "scale": (model.scale, (n,)),
        "coef": (model.coef, (classes, n)),
        "intercept": (model.intercept, (classes,)),
    }
    for key, (array, shape) in shapes.items():
        if array.shape != shape:
            return f"{key} of shape {array.shape}, expected {shape}"
        if not np.isfinite(array).all():
            return f"{key} not finite"
    if (model.scale <= 0).any():
        return "scale not positive"
    return None


def _tempering(data: object) -> dict[str, Tempering]:
    """The tempering of each attribute: temperature > 0 and floor in [0, 0.5)."""
    if not isinstance(data, dict):
        raise _Flaw("'tempering' is not an object")
    tempering = {}
    for attribute, entry in data.items():
        if attribute not in ATTRIBUTES:
            raise _Flaw(f"tempering for unknown attribute {attribute!r}")
        if not isinstance(entry, dict) or {"temperature", "floor"} - entry.keys():
            raise _Flaw(f"tempering for {attribute}: needs a temperature and a floor")
        t = Tempering(float(entry["temperature"]), float(entry["floor"]))
        if not (np.isfinite(t.temperature) and t.temperature > 0):
            raise _Flaw(f"tempering for {attribute}: temperature {t.temperature} is not above 0")
        if not 0.0 <= t.floor < 0.5:
            raise _Flaw(f"tempering for {attribute}: floor {t.floor} is outside [0, 0.5)")
        tempering[attribute] = t
    return tempering


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
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise ModelError(f"{path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not a valid setvision model (not text)") from None
    return AttributeModels.from_json(text, str(path))
