"""The project manager, the agent registry, the built-in agents and the offline model."""
