"""Keeping secrets out of what people and machines read: one `Redactor`, used wherever a secret
could leak (errors, logs, pages, stores, alerts, MCP capsules).

A secret is a password or token in a database URL (its userinfo or a credential-looking query
parameter), a value the caller knows is secret (an API key, an SMTP password, a webhook URL), or
the value of an environment variable whose name says it is one (`environment_secrets`).  Each is
replaced by MASK, longest first, so that a secret holding a shorter one is masked whole.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping
from urllib.parse import unquote, unquote_plus, urlparse, urlsplit, urlunparse, urlunsplit

from cataloger_dagster.core.sensitive.masking import DEFAULT_POLICY, Policy, ValuePolicy

MASK = "***"

# Query parameters that carry a credential: password, pass, pwd, sslpassword, token,
# motherduck_token, api_key, secret...  Hiding a harmless one (sslkey, a file path) costs nothing.
SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|key|credential", re.IGNORECASE)

# names of environment variables whose values are secrets (ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY,
# PGPASSWORD, GITHUB_TOKEN...)
SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSW|PWD|CREDENTIAL|AUTH", re.IGNORECASE)
MIN_SECRET = 6  # shorter values ("1", "true") would blank out ordinary words
NOT_SECRET = {"PWD", "OLDPWD"}  # the shell's working directories: their "PWD" is no password


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the variables of `environ` whose names say they are secrets."""
    return tuple(
        v
        for k, v in environ.items()
        if SECRET_VARIABLE.search(k) and k.upper() not in NOT_SECRET and len(v) >= MIN_SECRET
    )


def _secret_parameters(query: str) -> list[tuple[int, str]]:
    """(index, value as written) of each credential among the `&`-separated query parameters."""
    found = []
    for i, pair in enumerate(query.split("&")):
        key, sep, value = pair.partition("=")
        if sep and value and SECRET_PARAMETER.search(unquote_plus(key)):
            found.append((i, value))
    return found


def redact_url(url: str) -> str:
    """The URL with every password (in user:password@ or the query) replaced by ***,
    safe for logs, HTML and JSON."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # not even a URL (a stray bracket): show none of it
        return f"{url.split('://', 1)[0]}://(URL hidden: it cannot be parsed)" if "://" in url else "(URL hidden)"
    secret = _secret_parameters(parts.query)
    if password is None and not secret:
        return url
    netloc = f"{parts.username or ''}:{MASK}@{parts.netloc.rsplit('@', 1)[1]}" if password is not None else parts.netloc
    pairs = parts.query.split("&")
    for i, _ in secret:
        pairs[i] = pairs[i].partition("=")[0] + f"={MASK}"
    query = "&".join(pairs)
    # in place, so the rest reads as written (urlunsplit would turn duckdb:///x into duckdb:/x),
    # unless urlsplit changed the text (it drops tabs and newlines)
    if (password is None or f"//{parts.netloc}" in url) and (not secret or f"?{parts.query}" in url):
        return url.replace(f"//{parts.netloc}", f"//{netloc}", 1).replace(f"?{parts.query}", f"?{query}", 1)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def url_without_userinfo(url: str) -> str:
    """The URL without any user:password part: for an S3 endpoint, whose user is an access key."""
    parsed = urlparse(url)
    if parsed.username or parsed.password:
        host = parsed.hostname or ""
        netloc = f"{host}:{parsed.port}" if parsed.port else host
        parsed = parsed._replace(netloc=netloc)
    return urlunparse(parsed)


def url_secrets(url: str) -> set[str]:
    """Every credential in the URL, as written and decoded (an error may echo either)."""
    try:
        parts = urlsplit(url)
        values = [parts.password] if parts.password else []
    except ValueError:
        return {url}
    values += [value for _, value in _secret_parameters(parts.query)]
    return {form for v in values for form in (v, unquote(v), unquote_plus(v)) if form}


class Redactor:
    """Replaces every known secret in text (and in nested JSON-like values) with MASK, and every
    personal or secret value that proves its class (an e-mail, a card number, a national id, an
    API key...) as the sensitive-values policy says (core/sensitive/masking.py `scrub`)."""

    def __init__(
        self, url: str = "", secrets: Iterable[str | None] = (), sensitive: Policy | ValuePolicy = DEFAULT_POLICY
    ):
        """``url``: a database URL, named in the text as `redact_url` shows it, its credentials
        masked wherever they appear; ``secrets``: values known to be secret besides (empty ones
        are left out); ``sensitive``: the policy for personal values in the text (with its key)."""
        self.url = url
        found = (url_secrets(url) if url else set()) | {s for s in secrets if s}
        self.secrets = sorted(found, key=len, reverse=True)
        self.sensitive = sensitive if isinstance(sensitive, ValuePolicy) else ValuePolicy(sensitive)

    def text(self, value: str) -> str:
        if self.url and self.url in value:
            value = value.replace(self.url, redact_url(self.url))
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return self.sensitive.text(value)

    __call__ = text

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


def scrub_secrets(text: str, url: str) -> str:
    """`text` (an error message, a log line) with the URL's credentials replaced by ***."""
    return Redactor(url).text(text)
