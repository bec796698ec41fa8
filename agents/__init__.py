"""Actor-critic agents and training adapters. Not built yet."""
