"""Hydra config groups shipped as package data. Not built yet."""
