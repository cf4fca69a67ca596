"""`python -m app.config --markdown`: print docs/configuration.md as the settings declare it; else `--help`'s text."""

from __future__ import annotations

import sys

from app.config.docs import help_text, markdown


def main(argv: list[str]) -> int:
    if argv == ["--markdown"]:
        sys.stdout.write(markdown())
        return 0
    print(help_text())
    return 0 if argv in ([], ["--help"], ["-h"]) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
