"""What agents know: passage retrieval, embeddings, the evidence under an answer, the round's memory."""
