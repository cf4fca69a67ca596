"""Flows: saved workflow definitions (typed nodes and edges), their templates, expressions and validation.

Pure: no I/O and no other `agents` module; the engine that runs a flow lives in `app`.
"""
