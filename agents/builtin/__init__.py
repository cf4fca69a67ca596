"""The built-in agents, one module each: analyst, writer, summarizer, data extractor, translator."""
