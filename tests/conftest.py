"""Shared fixtures: real photos from ../shared/data are decoded once per session."""
