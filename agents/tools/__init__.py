"""External tools as agents: one validated call of a tool per task, and MCP servers' tools."""
