"""The OpenAI-compatible model client, the only place that imports `openai`."""
