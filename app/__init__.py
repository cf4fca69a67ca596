"""Foreman: the HTTP service, configuration, persistence and the durable round engine."""
