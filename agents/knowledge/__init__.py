"""What agents know: passage retrieval, embeddings, the evidence under an answer, the round's memory,
whether passages answer a question, what a table computes, a question's parts."""
