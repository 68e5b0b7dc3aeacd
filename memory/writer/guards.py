"""Rules the memory agent cannot talk its way around: forget requests, secrets, short ids."""

from __future__ import annotations

import re

# "Forget that", "delete it", "忘掉", "删除" … lift the per-turn deletion limit.
_FORGET_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bforget\b",
        r"\b(delete|erase|remove|drop|wipe)\b.{0,40}\b(that|this|it|memor\w*|everything|my|about)\b",
        r"\b(don'?t|do not|stop) (remember|keep|store|save)(ing)?\b",
        r"忘掉|忘了吧|忘记(这|那|我|关于|掉|吧)|把.{0,20}忘",
        r"删除|删掉|删了|清除|抹掉",
        r"(别|不要|不用|不许)(再)?(记|保存|存)",
    )
]
# Phrases that contain a forget word but ask for the opposite.
_NOT_FORGET = re.compile(
    r"\b(don['’]?t|do not|never|won['’]?t|not) forget\b|别忘|不要忘|不会忘|忘不了", re.IGNORECASE
)


def detect_forget_request(text: str) -> bool:
    """Whether the user's words explicitly ask to forget or delete something (en or zh)."""
    cleaned = _NOT_FORGET.sub(" ", text)
    return any(pattern.search(cleaned) for pattern in _FORGET_PATTERNS)


_SECRET_PATTERNS = [
    (
        "an API key or token",
        re.compile(
            r"\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|"
            r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abpr]-[A-Za-z0-9-]{10,}"
        ),
    ),
    (
        "a password",
        re.compile(
            r"(password|passcode|passwd|pwd|密码|口令)\s*(is|was|:|：|是|为)\s*\S+", re.IGNORECASE
        ),
    ),
    (
        "a one-time code",
        re.compile(
            r"(verification|one-time|otp|2fa)\s*code\D{0,12}\d{4,8}|验证码\D{0,6}\d{4,8}",
            re.IGNORECASE,
        ),
    ),
]
_DIGIT_RUN = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


def _luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def find_secret(text: str) -> str | None:
    """The kind of secret `text` seems to hold (card number, key, password), or None."""
    for match in _DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn_valid(digits):
            return "a card number"
    for name, pattern in _SECRET_PATTERNS:
        if pattern.search(text):
            return name
    return None
