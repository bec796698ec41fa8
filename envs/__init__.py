"""Gymnasium environments on the fabric simulator (see issue: environments). Not built yet."""
