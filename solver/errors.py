"""One exception hierarchy for the whole product; the CLI catches its base once."""


class SetvisionError(Exception):
    """Base of every error a user can cause; its message is one actionable line."""


class CardParseError(SetvisionError, ValueError):
    """A card's text form could not be read."""
