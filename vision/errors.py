"""Errors a user can cause with an image or a camera; all are SetvisionErrors."""

from setvision.solver.errors import SetvisionError


class ImageError(SetvisionError):
    """The file or array cannot be analysed as a colour photo."""


class CameraError(SetvisionError):
    """A camera or video stream could not be opened or stopped delivering frames."""
