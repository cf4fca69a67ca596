"""The ecosystem's protocols over Foreman's rounds: OpenAI-compatible chat, MCP, AG-UI (one module each)."""
