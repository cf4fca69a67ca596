"""Excel number formats applied to cell values, so numbers and dates read as the sheet shows them."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_DATE_TOKEN = re.compile(r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p|\.0+|.", re.IGNORECASE)
_BRACKET = re.compile(r"\[([^\]]*)\]")


def format_value(value: object, number_format: str | None) -> str:
    """The cell value as Excel displays it under `number_format` (common formats only)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return value
    fmt = number_format or "General"
    try:
        if isinstance(value, (datetime, date, time)):
            return _format_date(value, _pick_section(fmt, 1.0)[0])
        if isinstance(value, timedelta):
            return str(value)
        if isinstance(value, (int, float)):
            return _format_number(float(value), fmt)
    except (ValueError, OverflowError, IndexError):
        pass  # an exotic format falls back to the plain value rather than failing the sheet
    return str(value)


def _general(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


def _split_sections(fmt: str) -> list[str]:
    sections, current, quoted, escaped = [], [], False, False
    for char in fmt:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == '"':
            quoted = not quoted
            current.append(char)
        elif char == ";" and not quoted:
            sections.append("".join(current))
            current = []
        else:
            current.append(char)
    sections.append("".join(current))
    return sections


def _pick_section(fmt: str, value: float) -> tuple[str, bool]:
    """The section used for `value` and whether a minus sign must still be written."""
    sections = _split_sections(fmt)
    if value < 0 and len(sections) >= 2:
        return sections[1], False
    if value == 0 and len(sections) >= 3:
        return sections[2], False
    return sections[0], value < 0


def _tokens(section: str) -> list[tuple[str, str]]:
    """Split a section into ("lit", text) and ("code", char) tokens."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        char = section[i]
        if char == '"':
            end = section.find('"', i + 1)
            end = len(section) if end < 0 else end
            tokens.append(("lit", section[i + 1 : end]))
            i = end + 1
        elif char == "\\" and i + 1 < len(section):
            tokens.append(("lit", section[i + 1]))
            i += 2
        elif char == "_" and i + 1 < len(section):
            tokens.append(("lit", " "))  # padding the width of the next character
            i += 2
        elif char == "*" and i + 1 < len(section):
            i += 2  # fill character: meaningless outside a fixed-width cell
        elif char == "[":
            end = section.find("]", i)
            end = len(section) if end < 0 else end
            inner = section[i + 1 : end]
            if inner.startswith("$"):  # currency and locale: [$€-407] shows "€"
                tokens.append(("lit", inner[1:].split("-", 1)[0]))
            i = end + 1
        else:
            tokens.append(("code", char))
            i += 1
    return tokens


def _format_number(value: float, fmt: str) -> str:
    section, minus = _pick_section(fmt, value)
    if section.strip().lower() in ("general", "") or "general" in section.lower():
        text = _general(abs(value))
        literal = "".join(text for kind, text in _tokens(section.replace("General", "").replace("general", "")) if kind == "lit")
        return ("-" if minus else "") + text + literal
    tokens = _tokens(section)
    codes = "".join(text for kind, text in tokens if kind == "code")
    if "@" in codes and not any(c in codes for c in "0#?"):
        return _general(value)
    value = abs(value) * (100 ** codes.count("%"))
    if "E" in codes.upper() and any(c in codes for c in "0#"):
        body = _scientific(value, codes)
    elif "/" in codes:
        body = _fraction(value, codes)
    else:
        return ("-" if minus else "") + _fill_digits(value, tokens, codes)
    prefix = "".join(text for kind, text in tokens[: _first_code(tokens)] if kind == "lit")
    return ("-" if minus else "") + prefix + body + ("%" if "%" in codes else "")


def _first_code(tokens: list[tuple[str, str]]) -> int:
    return next((i for i, (kind, _) in enumerate(tokens) if kind == "code"), len(tokens))


def _fill_digits(value: float, tokens: list[tuple[str, str]], codes: str) -> str:
    """Write the integer at the first integer placeholder and decimals into the placeholders after '.'."""
    integer_codes, _, decimal_codes = codes.partition(".")
    decimals = sum(decimal_codes.count(c) for c in "0#?")
    thousands = "," in integer_codes.strip(",")
    # Excel rounds halves away from zero (2.5% shows as 3%), unlike Python's format().
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    text = f"{rounded:{',' if thousands else ''}.{decimals}f}"
    integer, _, fraction = text.partition(".")
    minimum = integer_codes.count("0")
    if integer == "0" and minimum == 0:
        integer = ""
    integer = integer.rjust(minimum, "0")
    out, seen_point, wrote_integer, digits = [], False, False, iter(fraction)
    for kind, text in tokens:
        if kind == "lit":
            out.append(text)
        elif text == ".":
            seen_point = True
            out.append(".")
        elif text in "0#?" and not seen_point:
            if not wrote_integer:
                out.append(integer)
                wrote_integer = True
        elif text in "0#?":
            out.append(next(digits, ""))
        elif text not in ",":
            out.append(text)
    return "".join(out)


def _scientific(value: float, codes: str) -> str:
    mantissa, _, exponent = codes.upper().partition("E")
    decimals = len(re.sub(r"[^0#?]", "", mantissa.partition(".")[2]))
    digits = max(1, len(re.sub(r"[^0]", "", exponent)))
    base, _, power = f"{value:.{decimals}E}".partition("E")
    sign = "-" if power.startswith("-") else ("+" if "+" in exponent else "")
    return f"{base}E{sign}{str(abs(int(power))).rjust(digits, '0')}"


def _fraction(value: float, codes: str) -> str:
    denominator_codes = codes.split("/", 1)[1]
    fixed = re.sub(r"[^0-9]", "", denominator_codes)
    whole = int(value) if re.search(r"[0#?]\s", codes) else 0
    rest = Fraction(value - whole)
    if fixed:
        rest = Fraction(round(rest * int(fixed)), int(fixed))
    else:
        rest = rest.limit_denominator(10 ** max(1, denominator_codes.count("?") + denominator_codes.count("#")) - 1)
    if rest.numerator == 0:
        return str(whole)
    return f"{whole} {rest.numerator}/{rest.denominator}" if whole else f"{rest.numerator}/{rest.denominator}"


def _format_date(value: datetime | date | time, section: str) -> str:
    if isinstance(value, time):
        value = datetime.combine(date(1899, 12, 30), value)
    elif not isinstance(value, datetime):
        value = datetime.combine(value, time())
    merged: list[tuple[str, str]] = []
    for kind, text in _tokens(section):
        if merged and kind == "code" and merged[-1][0] == "code":
            merged[-1] = ("code", merged[-1][1] + text)
        else:
            merged.append((kind, text))
    codes = [(kind, piece) for kind, text in merged for piece in (_DATE_TOKEN.findall(text) if kind == "code" else [text])]
    twelve_hour = any(kind == "code" and piece.lower() in ("am/pm", "a/p") for kind, piece in codes)
    out = []
    for index, (kind, piece) in enumerate(codes):
        if kind == "lit":
            out.append(piece)
            continue
        out.append(_date_part(value, piece, codes, index, twelve_hour))
    return "".join(out)


def _date_part(value: datetime, piece: str, codes: list[tuple[str, str]], index: int, twelve_hour: bool) -> str:
    lower = piece.lower()
    if lower in ("m", "mm") and _is_minute(codes, index):
        return f"{value.minute:02d}" if lower == "mm" else str(value.minute)
    hour = value.hour % 12 or 12 if twelve_hour else value.hour
    parts = {
        "yyyy": f"{value.year:04d}", "yy": f"{value.year % 100:02d}",
        "mmmmm": _MONTHS[value.month - 1][0], "mmmm": _MONTHS[value.month - 1], "mmm": _MONTHS[value.month - 1][:3],
        "mm": f"{value.month:02d}", "m": str(value.month),
        "dddd": _DAYS[value.weekday()], "ddd": _DAYS[value.weekday()][:3], "dd": f"{value.day:02d}", "d": str(value.day),
        "hh": f"{hour:02d}", "h": str(hour), "ss": f"{value.second:02d}", "s": str(value.second),
        "am/pm": "AM" if value.hour < 12 else "PM", "a/p": "A" if value.hour < 12 else "P",
    }
    if lower.startswith(".0"):
        return "." + f"{value.microsecond:06d}"[: len(piece) - 1]
    return parts.get(lower, piece)


def _is_minute(codes: list[tuple[str, str]], index: int) -> bool:
    """'m' means minutes right after an hour or right before seconds."""
    before = [p.lower() for k, p in codes[:index] if k == "code" and p.strip(" :/-,.")]
    after = [p.lower() for k, p in codes[index + 1 :] if k == "code" and p.strip(" :/-,.")]
    return bool(before and before[-1] in ("h", "hh")) or bool(after and after[0] in ("s", "ss"))
