"""Database URLs: `postgresql://`, `sqlite:///path`, `sqlite://:memory:`, `mysql://`, `mariadb://`."""

from __future__ import annotations

import dataclasses
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import ConfigurationError
from .drivers.backends import SCHEMES

__all__ = ["DatabaseURL", "parse_url", "text_problem"]

@dataclasses.dataclass(frozen=True)
class DatabaseURL:
    """The parts of a database URL that the drivers need."""

    backend: str
    scheme: str
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)
    database: str | None = None
    options: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the database is a file (or :memory:), not a server
    file: bool = False

    def __str__(self) -> str:
        if self.file:
            memory = self.database == ":memory:"
            return f"{self.scheme}://:memory:" if memory else f"{self.scheme}:///{self.database}"
        auth = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{auth}{self.host or ''}{port}/{self.database or ''}"


def text_problem(value: object) -> str | None:
    """What keeps a connection setting's text from reaching the driver as written, or None:
    a NUL (libpq and the MySQL handshake end the text there, so another database, user or
    setting than the one written would be used; sqlite3 raises ValueError) or text that is
    not valid Unicode (a lone surrogate, which no driver can encode)."""
    if not isinstance(value, str):
        return None
    if "\x00" in value:
        return "holds a NUL character, where the driver would cut it"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate), which the driver cannot send"
    return None


def _checked(url: DatabaseURL) -> DatabaseURL:
    """The URL, or ConfigurationError for a part that would not reach the driver as written."""
    parts: list[tuple[str, object]] = [
        ("host", url.host), ("user", url.user), ("password", url.password),
        ("database" if not url.file else "path", url.database),
    ]
    for name, option in url.options.items():
        parts += [(f"option name {name!r}", name), (f"?{name}= option", option)]
    for what, text in parts:
        problem = text_problem(text)
        if problem is not None:
            raise ConfigurationError(
                f"database URL {url.scheme}://...: the {what} {problem}; remove the character "
                "(a %00 or an unpaired surrogate) from the URL"
            )
    return url


def parse_url(url: str) -> DatabaseURL:
    """Split a database URL, or raise ConfigurationError saying what is wrong with it."""
    return _checked(_split(url))


def _shown(url: object) -> str:
    """The URL as an error message shows it: its password, if it has one, masked."""
    if not isinstance(url, str):
        return repr(url)
    scheme, _, rest = url.rpartition("://")
    end = rest.find("?")
    at = rest.rfind("@", 0, end if end >= 0 else len(rest))
    if at >= 0 and ":" in rest[:at]:
        rest = rest[:at].split(":", 1)[0] + ":***" + rest[at:]
    return repr(f"{scheme}://{rest}" if scheme else rest)


def _split(url: str) -> DatabaseURL:
    if not isinstance(url, str) or "://" not in url:
        raise ConfigurationError(
            f"database URL {_shown(url)} has no scheme; write postgresql://user@host/db, "
            "mysql://user@host/db, sqlite:///path/to/file.db or sqlite://:memory:"
        )
    scheme, rest = url.split("://", 1)
    found = SCHEMES.get(scheme.lower())
    if found is None:
        raise ConfigurationError(
            f"database URL {_shown(url)}: unknown scheme {scheme!r}; use postgresql, mysql, "
            "mariadb or sqlite"
        )
    backend = found.name
    if found.file:
        path, _, query = rest.partition("?")
        options = dict(parse_qsl(query))
        if path in (":memory:", "/:memory:"):
            return DatabaseURL(backend, scheme, database=":memory:", options=options, file=True)
        if not path.startswith("/") or path == "/":
            raise ConfigurationError(
                f"database URL {_shown(url)}: a SQLite URL is sqlite:///relative/path.db, "
                "sqlite:////absolute/path.db or sqlite://:memory:"
            )
        return DatabaseURL(backend, scheme, database=unquote(path[1:]), options=options,
                           file=True)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigurationError(f"database URL {_shown(url)}: {exc}") from exc
    if not parts.hostname and not dict(parse_qsl(parts.query)).get("host"):
        raise ConfigurationError(f"database URL {_shown(url)} names no host; write {scheme}://user@host/db")
    database = unquote(parts.path.lstrip("/")) or None
    if found.needs_database and not database:
        raise ConfigurationError(f"database URL {_shown(url)} names no database; write {scheme}://user@host/db")
    return DatabaseURL(
        backend, scheme.lower(), host=parts.hostname, port=port,
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        database=database, options=dict(parse_qsl(parts.query)),
    )
