"""Flows: saved workflow definitions (CONTRACT.md "Flows: saved workflows"), pure: no I/O and no other
project module; the engine that runs a flow lives in `app`.

- `definition`: the typed definition (msgspec, camelCase), `config_of`, `decode_definition`;
- `validate`: every problem at once, with node ids and stable codes (`graph`: its algorithms);
- `templates` (Jinja2's sandbox) and `expressions` (CEL), and `scope`: what both read, and a run's inputs;
- `canonical`: canonical JSON, the hash, YAML; `schema`: the JSON Schema; `diff`: two definitions compared;
- `errors`: the `FlowError` tree.
"""
