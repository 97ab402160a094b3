"""Calibration profiles on disk, and the reader that reads with one.

Profiles are JSON files under the user's config directory,
``$XDG_CONFIG_HOME/setvision/profiles/NAME.json`` (else ``~/.config/...``); the default
profile is named in ``$XDG_CONFIG_HOME/setvision/config.json``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
from setvision.calibration.auto import calibrate_layout
from setvision.calibration.deck import DeckProfile
from setvision.solver.errors import SetvisionError
from setvision.vision.pipeline import Adjuster, CardReader
from setvision.vision.read.classify import AttributeModels, load_models
from setvision.vision.read.features import CardFeatures

logger = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ProfileError(SetvisionError):
    """A profile name is invalid, unknown, or its file cannot be read or written."""


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/setvision``, else ``~/.config/setvision``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "setvision"


def profiles_dir() -> Path:
    return config_dir() / "profiles"


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise ProfileError(
            f"profile name {name!r} must be 1 to 64 letters, digits, '-' or '_' (e.g. kitchen-lamp)"
        )
    return name


def profile_path(name: str) -> Path:
    return profiles_dir() / f"{check_name(name)}.json"


def list_profiles() -> list[str]:
    """Names of the stored profiles, sorted."""
    folder = profiles_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if NAME_PATTERN.fullmatch(p.stem))


def _unknown(name: str) -> ProfileError:
    names = list_profiles()
    known = (
        f"profiles: {', '.join(names)}" if names else "no profiles yet: run `setvision calibrate`"
    )
    return ProfileError(f"no profile named {name!r} ({known})")


def _write(path: Path, text: str) -> None:
    """Write a whole file or nothing: a half-written profile would be worse than none."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(text)
        os.replace(partial, path)
    except OSError as error:
        raise ProfileError(f"{path}: cannot write ({error.strerror})") from None


def save_profile(profile: DeckProfile, replace: bool = False) -> Path:
    path = profile_path(profile.name)
    if path.exists() and not replace:
        raise ProfileError(f"profile {profile.name!r} exists: add --force to replace it")
    _write(path, json.dumps(profile.to_dict(), indent=1))
    return path


def load_profile(name: str) -> DeckProfile:
    path = profile_path(name)
    if not path.is_file():
        raise _unknown(name)
    try:
        profile = DeckProfile.from_dict(_read_json(path))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise ProfileError(
            f"{path}: not a usable profile ({_short(error)}); run `setvision calibrate --force` "
            "again"
        ) from None
    return replace(profile, name=name)  # the file's name is its name, wherever it was copied from


def _read_json(path: Path):
    """A JSON file's value; ``ValueError`` if not JSON, nested too deep to read, or not UTF-8."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def delete_profile(name: str) -> Path:
    """Remove a profile; if it was the default, there is no default any more."""
    path = profile_path(name)
    if not path.is_file():
        raise _unknown(name)
    path.unlink()
    with contextlib.suppress(ProfileError):  # a broken config names no default to clear
        if default_profile() == name:
            set_default(None)
    return path


def _config_path() -> Path:
    return config_dir() / "config.json"


def _config() -> dict:
    """The config file's settings ({} without one); a ``ProfileError`` if it is unusable."""
    path = _config_path()
    if not path.is_file():
        return {}
    repair = "fix or delete it, or run `setvision profiles default --clear`"
    try:
        config = _read_json(path)
    except (OSError, ValueError) as error:
        raise ProfileError(f"{path}: not valid JSON ({_short(error)}); {repair}") from None
    if not isinstance(config, dict):
        raise ProfileError(f"{path}: not a JSON object; {repair}")
    name = config.get("default_profile")
    if name not in (None, "") and not (isinstance(name, str) and NAME_PATTERN.fullmatch(name)):
        raise ProfileError(f"{path}: default_profile is not a profile name; {repair}")
    return config


def _short(error: Exception) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__


def default_profile() -> str | None:
    """The name of the default profile, or None."""
    return _config().get("default_profile") or None


def set_default(name: str | None) -> bool:
    """Make ``name`` the default profile (it must exist), or clear the default with None.

    An unusable config file is replaced (it said nothing usable); True if one was.
    """
    if name is not None and not profile_path(name).is_file():
        raise _unknown(name)
    try:
        config, replaced = _config(), False
    except ProfileError:
        config, replaced = {}, True
    if name is None:
        config.pop("default_profile", None)
    else:
        config["default_profile"] = name
    _write(_config_path(), json.dumps(config, indent=1))
    return replaced


def model_fingerprint(models: AttributeModels) -> str:
    """A short hash of the model's stored form: which general model a profile was made with."""
    return hashlib.sha1(models.to_json().encode()).hexdigest()[:12]


def chain(*adjusters: Adjuster | None) -> Adjuster | None:
    """One adjuster that applies the given ones in order (None ones skipped)."""
    steps = [a for a in adjusters if a is not None]
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]

    def chained(
        features: list[CardFeatures], probabilities: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        for step in steps:
            probabilities = step(features, probabilities)
        return probabilities

    return chained


def reader_for(
    profile: str | None = None,
    model: str | None = None,
    auto: bool = True,
    models: AttributeModels | None = None,
) -> CardReader:
    """A CardReader: the shipped (or given) model, the named profile, then per-photo calibration.

    ``profile`` None means no profile: the user's default profile is chosen above, by the
    application layer (``setvision.app.readers.choose_profile``), never here.
    """
    deck = load_profile(profile) if profile is not None else None
    models = models if models is not None else load_models(model)
    return CardReader(models, chain(deck, calibrate_layout if auto else None))
