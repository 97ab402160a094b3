"""Choosing how photos are read: the calibration profile, the model, per-photo calibration.

In: the user's choices (a profile name or none, a model file or the shipped one, whether each
photo's colours are calibrated against its own confident cards). Out: a ``ProfileChoice`` that
says which profile reads and why (shown in every command's output), and the ``CardReader``
built for it. The user's default profile is looked up here, once, at the top of a command;
below this layer a reader only ever gets the profile it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from setvision.calibration import profiles
from setvision.vision.pipeline import CardReader
from setvision.vision.read.classify import AttributeModels


@dataclass(frozen=True)
class ProfileChoice:
    """The calibration profile a command reads with: ``name`` (None: none), and whether it is
    the user's default rather than named on the command line."""

    name: str | None = None
    default: bool = False

    def __str__(self) -> str:
        """As the output shows it: ``kitchen``, ``kitchen (the default)`` or ``none``."""
        if self.name is None:
            return "none"
        return f"{self.name} (the default)" if self.default else self.name


#: No calibration profile: the general model (and per-photo calibration, if on).
NO_PROFILE = ProfileChoice()


def choose_profile(name: str | None) -> ProfileChoice:
    """The profile named, else the user's default one, else none (``NO_PROFILE``).

    A default profile whose file is gone is refused here, with the way to clear it.
    """
    if name is not None:
        return ProfileChoice(profiles.check_name(name))
    default = profiles.default_profile()
    if default is None:
        return NO_PROFILE
    if not profiles.profile_path(default).is_file():
        raise profiles.ProfileError(
            f"the default profile {default!r} is missing: run `setvision profiles default --clear`"
        )
    return ProfileChoice(default, default=True)


def make_reader(
    profile: ProfileChoice = NO_PROFILE,
    model: str | None = None,
    auto: bool = True,
    models: AttributeModels | None = None,
) -> CardReader:
    """The reader for a chosen profile: ``models`` (else the file ``model``, else the shipped
    one), the profile, then per-photo calibration when ``auto``.

    A module-level function of picklable arguments, so ``functools.partial`` of it is a reader
    factory that worker processes can build their own reader from.
    """
    return profiles.reader_for(profile.name, model, auto, models)
