"""Calibration to a deck and its light: photos of known cards go in, a profile comes out.

``deck`` fits a profile (colour and fill per value) on cards of known identity and reads with
it; ``profiles`` keeps profiles on disk and builds the reader for the one chosen; ``auto``
re-reads a photo's doubtful cards against its own confident ones; ``known`` measures a photo
once for both; ``measure`` reports what each kind of calibration buys per source.
"""
