"""Running one task and what every agent's task uses: its inputs, model calls, output documents, questions."""
