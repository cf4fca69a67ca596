"""Persistence: the database, its tables and migrations, every SQL statement, the file store, the search index."""
