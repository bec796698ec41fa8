"""Flow-size distributions shipped with flowsched (see README.md in this folder for provenance)."""
