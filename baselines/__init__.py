"""Rule-based scheduling policies with the agents predict() protocol. Not built yet."""
