"""Pure text tools for agents and the offline model: language, sentences, tables, tokens, files."""
