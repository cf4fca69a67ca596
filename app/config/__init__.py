"""Settings, read once from an environment mapping by `from_env`; each declared once in `settings.py`.

`declare` says how a setting is declared and read, `values` and `mcp` read the ones with a form of
their own, `docs` writes docs/configuration.md and `--help` from the declarations.
"""

from app.config.declare import SettingsError
from app.config.docs import help_text
from app.config.settings import Settings, default_executor_id, from_env
from app.config.values import ApiKey, redact_url

__all__ = ["ApiKey", "Settings", "SettingsError", "default_executor_id", "from_env", "help_text", "redact_url"]
