"""The offline model: deterministic, no network, useful work without generative AI."""

from agents.offline.model import OfflineModel

__all__ = ["OfflineModel"]
