"""Keeping API keys and passwords out of everything we store, export or print: the one redaction function.

    remember(secret)            a key or password this process was handed (memory only, never written anywhere)
    remember_basic(user, pw)    the password of HTTP Basic auth, and the header's token (base64 of user:password)
    remember_url(url)           the same for the ``user:password@`` of a URL
    known_secrets() -> set      those, plus the values of every ``*_API_KEY`` environment variable
    redact(text, *secrets)      ``text`` with every trace of a known secret replaced by ``[redacted]``
    redact_url(url)             a URL without ``user:password@``

What counts as a trace (endpoints have been seen to echo a key upper-cased, or cut short):

* any run of MIN_PIECE (8) or more characters of a known secret, in any letter case — a key quoted in part, masked
  in the middle or shouted back is caught, not only the exact key; secrets shorter than MIN_PIECE are matched whole
  (in any case);
* credentials in URLs (``scheme://user:password@host`` → ``scheme://[redacted]@host``);
* with ``keylike=True`` (error messages, the default) also anything shaped like an OpenAI/Anthropic key
  (``sk-…``, including the masked ``sk-proj-****abcd`` forms providers echo), the value of any ``Authorization``
  header quoted in the text (``Authorization: Basic …``, ``"authorization": "…"``), a ``Bearer`` token, and a
  ``Basic`` token that decodes to ``user:password``. Model replies are redacted with ``keylike=False``: a reply
  such as ``{risk-free, …}`` is data, not a key (a reply quoting a known secret or token is still caught).

A password given as Basic auth (``http://alice:pw@host/v1``) is remembered together with the token its header
carries (``remember_basic``): an endpoint echoing ``Basic YWxpY2U6…`` — or a piece of it — is caught like the
password itself. Every log record is redacted too (``install_log_redaction``, installed when this module is
imported): its message is formatted and redacted when the record is made.

The runner applies it to every error reason and reply before they are journalled; the store applies it again to
whatever it writes (errors, replies), exports to their text columns, and the CLI to every line it prints.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
import threading
from functools import lru_cache

MIN_PIECE = 8          # characters of a secret that count as a trace of it
MIN_SECRET = 4         # shorter strings are not treated as secrets (they would redact ordinary words)
MARK = "[redacted]"

_KNOWN: set[str] = set()
_LOCK = threading.Lock()
_KEYLIKE = re.compile(r"sk-[^\s'\",;]{4,}")
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]+@")
# the value of an Authorization header quoted in text: "Authorization: Basic abc", authorization='Bearer x', JSON
_AUTH_HEADER = re.compile(r"""(?i)(\b(?:proxy-)?authorization\b["']?\s*[:=]\s*["']?)([^"'\r\n,;}]+)""")
_BEARER = re.compile(r"\b([Bb]earer\s+)([A-Za-z0-9._~+/=-]{8,})")
_BASIC = re.compile(r"\b([Bb]asic\s+)([A-Za-z0-9+/]{4,}={0,2})")


def remember(*secrets: str | None) -> None:
    """Add secrets (API keys, passwords in base URLs) to this process's list. Kept in memory only."""
    with _LOCK:
        _KNOWN.update(s.strip() for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_SECRET)


def remember_basic(user: str | None, password: str | None) -> None:
    """Remember HTTP Basic credentials: the password (or the user when there is no password) and the token of the
    header they make, ``base64(user:password)`` — which decodes to the password."""
    user, password = user or "", password or ""
    if not (user or password):
        return
    token = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
    remember(password or user, token, token.rstrip("="))


def remember_url(url: str | None) -> None:
    """Remember the Basic credentials a URL carries (``scheme://user:password@host``; percent-escapes decoded)."""
    if not isinstance(url, str) or "@" not in url:
        return
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return
    if parts.username is not None or parts.password is not None:
        remember_basic(unquote(parts.username or ""), unquote(parts.password or ""))


def _basic_token(m: re.Match) -> str:
    """A ``Basic <token>`` match redacted when the token decodes to ``user:password`` (text such as "Basic auth
    required" is left alone)."""
    try:
        decoded = base64.b64decode(m.group(2) + "=" * (-len(m.group(2)) % 4), validate=True)
    except (binascii.Error, ValueError):
        return m.group(0)
    return m.group(1) + MARK if b":" in decoded else m.group(0)


def _env_secrets() -> frozenset[str]:
    """The values of the ``*_API_KEY`` environment variables, re-read when the environment changes (its variables
    are decoded once per change, not once per reply: at 1,000 replies a second that decoding was a hot spot)."""
    global _ENV_CACHE
    data = os.environ._data if hasattr(os.environ, "_data") else None   # the raw mapping os.environ writes to
    sig = (id(data), len(data)) if data is not None else None
    cached = _ENV_CACHE
    if sig is not None and cached is not None and cached[0] == sig and cached[1] == _env_fingerprint(data):
        return cached[2]
    env = frozenset(v.strip() for k, v in os.environ.items()
                    if k.upper().endswith("_API_KEY") and len(v.strip()) >= MIN_SECRET)
    if sig is not None:
        _ENV_CACHE = (sig, _env_fingerprint(data), env)
    return env


def _env_fingerprint(data) -> tuple:
    """A cheap fingerprint of the raw environment's *_API_KEY entries (bytes keys and values, not decoded): the
    hash of all its names (a name added or removed changes it; computed in C, and the names' hashes are cached),
    and the values of the names that end in _API_KEY (looked up, not searched for, while the names stay the same)."""
    names = hash(tuple(data))
    cached = _FINGERPRINT_NAMES
    if cached is None or cached[0] != names:
        suffix = b"_API_KEY" if data and isinstance(next(iter(data)), bytes) else "_API_KEY"
        cached = _set_fingerprint_names(names, tuple(k for k in data if k.upper().endswith(suffix)))
    return names, tuple(data.get(k) for k in cached[1])


_FINGERPRINT_NAMES: tuple | None = None   # (hash of the environment's names, the names ending in _API_KEY)


def _set_fingerprint_names(names: int, keys: tuple) -> tuple:
    global _FINGERPRINT_NAMES
    _FINGERPRINT_NAMES = (names, keys)
    return _FINGERPRINT_NAMES


_ENV_CACHE: tuple | None = None


def known_secrets() -> set[str]:
    """The secrets remembered by this process and the values of the ``*_API_KEY`` environment variables."""
    env = _env_secrets()
    with _LOCK:
        return _KNOWN | env


@lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern | None:
    """One case-insensitive pattern finding, at every position, the start of a MIN_PIECE-long piece of a secret (or
    a whole short secret). Matched as a lookahead so overlapping pieces are all found."""
    alternatives: set[str] = set()
    for s in secrets:
        if len(s) < MIN_PIECE:
            alternatives.add(re.escape(s))
        else:
            alternatives.update(re.escape(s[i:i + MIN_PIECE]) for i in range(len(s) - MIN_PIECE + 1))
    if not alternatives:
        return None
    # longest first: a whole short secret is preferred to nothing; pieces are all MIN_PIECE long
    body = "|".join(sorted(alternatives, key=lambda a: (-len(a), a)))
    return re.compile(f"(?=({body}))", re.IGNORECASE)


@lru_cache(maxsize=64)
def _pieces(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """The lower-cased pieces the pattern looks for (a cheap first test: plain substring searches)."""
    out: set[str] = set()
    for s in secrets:
        s = s.lower()
        out.update([s] if len(s) < MIN_PIECE else (s[i:i + MIN_PIECE] for i in range(len(s) - MIN_PIECE + 1)))
    return tuple(sorted(out))


def _redact_pieces(text: str, secrets: tuple[str, ...]) -> str:
    lowered = text.lower()
    if not any(piece in lowered for piece in _pieces(secrets)):   # the common case: C substring searches only
        return text
    pattern = _pattern(secrets)
    if pattern is None:
        return text
    spans: list[list[int]] = []
    for m in pattern.finditer(text):
        start, end = m.start(), m.start() + len(m.group(1))
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(MARK)
        last = end
    out.append(text[last:])
    return "".join(out)


def redact(text, *secrets: str | None, keylike: bool = True):
    """``text`` without any trace of the given or known secrets (see the module docstring). Non-text passes
    through unchanged (None stays None)."""
    if not isinstance(text, str) or not text:
        return text
    given = {s.strip() for s in secrets if isinstance(s, str) and len(s.strip()) >= MIN_SECRET}
    all_secrets = tuple(sorted(given | known_secrets()))
    if all_secrets:
        text = _redact_pieces(text, all_secrets)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + MARK + "@", text)
    if keylike:
        text = _KEYLIKE.sub(MARK, text)
        if "uthorization" in text or "UTHORIZATION" in text:
            text = _AUTH_HEADER.sub(lambda m: m.group(1) + MARK, text)
        if "earer" in text:
            text = _BEARER.sub(lambda m: m.group(1) + MARK, text)
        if "asic" in text:
            text = _BASIC.sub(_basic_token, text)
    return text


def redact_url(url: str | None) -> str | None:
    """The URL without ``user:password@`` (for messages and anything stored)."""
    if not isinstance(url, str):
        return url
    return _URL_CREDENTIALS.sub(lambda m: m.group(1), url)


class _RedactedRecord(logging.LogRecord):
    """A log record whose message is formatted and redacted once, when it is made (any logger, any handler)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        try:
            message = self.getMessage()
        except (TypeError, ValueError, KeyError):   # a bad format string: logging reports it when it emits
            return
        self.msg, self.args = redact(message), None
        if self.exc_info and self.exc_info[1] is not None and not self.exc_text:
            self.exc_text = redact(logging.Formatter().formatException(self.exc_info))


def install_log_redaction() -> None:
    """Make every log record of this process a redacted one (idempotent; a custom record class set by someone else
    is left alone)."""
    if logging.getLogRecordFactory() is logging.LogRecord:
        logging.setLogRecordFactory(_RedactedRecord)


install_log_redaction()
