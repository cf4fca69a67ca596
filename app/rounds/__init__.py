"""The round engine: DBOS workflows and their supervisor, the journal, reading documents, the live stream."""
