"""Declarative, reviewable source patches for vendor inference-engine zips."""

__version__ = "0.1.0"
