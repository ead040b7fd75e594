"""create_engine()'s options: which database takes which, and the values each accepts.

Every option is checked here, before a driver is constructed (psycopg's pool starts
connecting in its constructor), so a misspelt option, one another database owns, or a value
out of range is a ConfigurationError from create_engine() that names the option and what is
accepted, never a TypeError from a driver or a PRAGMA that SQLite silently ignores.

| option | where | databases | accepted |
|---|---|---|---|
| `pool_size` | keyword | all | an int >= 1 (default 10 on the servers, 5 on SQLite; :memory: takes 1 only) |
| `pool_timeout` | keyword | all | seconds > 0 to wait for a free connection (default 30) |
| `connect_args` | keyword | all | a dict passed to the driver's connect() |
| `echo` | keyword | all | True logs every statement |
| `busy_timeout` | keyword or URL | SQLite | seconds >= 0 to wait for the write lock (default 30) |
| `journal_mode` | keyword or URL | SQLite files | delete, truncate, persist, memory, wal (default), off |
| `synchronous` | keyword or URL | SQLite | off, normal, full, extra (or 0-3) |
| libpq parameters (`sslmode`, `options`, ...) | URL | PostgreSQL | what libpq takes |
| PyMySQL connect() parameters (`ssl_ca`, ...) | URL | MySQL/MariaDB | what pymysql.connect takes |
"""

from __future__ import annotations

import difflib
import importlib
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigurationError
from .drivers.backends import BACKENDS
from .url import DatabaseURL, text_problem

__all__ = ["JOURNAL_MODES", "SYNCHRONOUS", "driver_options"]

JOURNAL_MODES = ("delete", "truncate", "persist", "memory", "wal", "off")
SYNCHRONOUS = ("off", "normal", "full", "extra", "0", "1", "2", "3")

#: the keywords every create_engine() takes
COMMON = ("echo", "pool_size", "pool_timeout", "connect_args")
def _owner(option: str) -> str | None:
    for backend in BACKENDS.values():
        if option in backend.own_options:
            return backend.name
    return None


def _refuse(option: str, backend: str, how: str,
            accepted: frozenset[str] | None = None) -> ConfigurationError:
    """The error for an option the engine's database does not take."""
    takes = ", ".join(COMMON + BACKENDS[backend].own_options)
    owner = _owner(option)
    if owner is not None and owner != backend:
        return ConfigurationError(
            f"create_engine(): {option} is an option of {BACKENDS[owner].title}; a {BACKENDS[backend].title} "
            f"engine does not take it. Drop {how} (a {backend} engine takes: {takes})"
        )
    if accepted is not None:  # a URL query option of a server
        names = accepted
        takes = f"its URL takes {BACKENDS[backend].url_parameters}"
    else:
        names = frozenset(COMMON + BACKENDS[backend].own_options)
        takes = f"it takes {takes}"
    near = difflib.get_close_matches(option, sorted(names), n=1, cutoff=0.7)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return ConfigurationError(
        f"create_engine(): unknown option {option!r} ({how}) for {BACKENDS[backend].title}; "
        f"{hint}{takes}"
    )


def _seconds(option: str, value: object, *, zero_ok: bool) -> float:
    """A number of seconds, or ConfigurationError naming the option."""
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number < 0 or (number == 0 and not zero_ok):
        bound = ">= 0" if zero_ok else "> 0"
        raise ConfigurationError(
            f"create_engine(): {option}={value!r}: {option} is a number of seconds {bound} "
            f"(e.g. {option}=5)"
        )
    return number


def _choice(option: str, value: object, accepted: tuple[str, ...]) -> str:
    """One of `accepted` (case-insensitive), or ConfigurationError listing them."""
    text = value.strip().lower() if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    if text is None or text not in accepted:
        raise ConfigurationError(
            f"create_engine(): {option}={value!r} is not a value SQLite takes; use one of "
            f"{', '.join(accepted)}"
        )
    return text


def _file_options(url: DatabaseURL, keywords: dict[str, Any]) -> dict[str, Any]:
    """A file database's options (SQLite's: its driver has no connect() to ask), checked."""
    values = dict(keywords)
    for name, value in url.options.items():
        if name not in BACKENDS[url.backend].own_options:
            raise _refuse(name, url.backend, f"?{name}= in the URL")
        values[name] = value  # the URL's value wins over the keyword's
    out: dict[str, Any] = {}
    if "busy_timeout" in values:
        out["busy_timeout"] = _seconds("busy_timeout", values["busy_timeout"], zero_ok=True)
    if "journal_mode" in values:
        mode = _choice("journal_mode", values["journal_mode"], JOURNAL_MODES)
        if url.database == ":memory:":
            raise ConfigurationError(
                f"create_engine(): journal_mode={values['journal_mode']!r} does not apply to "
                "sqlite://:memory:, whose journal always stays in memory; drop journal_mode, "
                "or use a file (sqlite:///path.db)"
            )
        out["journal_mode"] = mode
    if "synchronous" in values:
        out["synchronous"] = _choice("synchronous", values["synchronous"], SYNCHRONOUS)
    return out


def _check_text_option(backend: str, name: str, value: object, how: str) -> None:
    """Refuse a connection option that would carry text in another encoding than UTF-8."""
    keeps = BACKENDS[backend].text_options.get(name)
    if keeps is not None and str(value).lower() not in keeps:
        raise ConfigurationError(
            f"create_engine(): {how}: {name}={value!r} would carry text in another encoding "
            f"than UTF-8, where every database stores it: a str column would read back as "
            f"bytes, or as '?' for what the encoding cannot hold, or fail on some strings. "
            f"Drop {name} (the engine's connections use {name}={keeps[0]})"
        )


def driver_options(url: DatabaseURL, *, pool_size: object, pool_timeout: object,
                   connect_args: object, options: Mapping[str, Any],
                   url_option_names: Callable[[], frozenset[str]] | None = None,
                   ) -> dict[str, Any]:
    """The keyword arguments for the driver of `url`, every option checked.

    `url_option_names` gives the names the driver's connect() takes, to check the URL's query
    options against (SQLite's are checked here).
    """
    backend = url.backend
    for name in options:
        if name not in BACKENDS[backend].own_options:
            raise _refuse(name, backend, f"{name}=...")
    kwargs: dict[str, Any] = {
        "pool_timeout": _seconds("pool_timeout", pool_timeout, zero_ok=False),
    }
    if pool_size is not None:
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ConfigurationError(
                f"create_engine(): pool_size must be an int of at least 1, got {pool_size!r}"
            )
        if pool_size != 1 and url.file and url.database == ":memory:":
            raise ConfigurationError(
                f"create_engine(): pool_size={pool_size} does not apply to sqlite://:memory:, "
                "which is one connection that every session shares (a second connection would "
                "open another, empty database); drop pool_size, or use a file "
                "(sqlite:///path.db) for connections of their own"
            )
        kwargs["pool_size"] = pool_size
    if connect_args is not None and not (
            isinstance(connect_args, dict) and all(isinstance(k, str) for k in connect_args)):
        raise ConfigurationError(
            f"create_engine(): connect_args must be a dict of keyword arguments for the "
            f"driver's connect(), got {type(connect_args).__name__}"
        )
    for name in connect_args or ():
        for what, text in (("name", name), ("value", connect_args[name])):  # type: ignore[index]  # a dict, checked above
            problem = text_problem(text)
            if problem is not None:
                raise ConfigurationError(
                    f"create_engine(): connect_args={{{name!r}: ...}}: the {what} {problem}; "
                    "remove the character"
                )
        _check_text_option(backend, name, connect_args[name], f"connect_args={{{name!r}: ...}}")  # type: ignore[index]  # a dict, checked above
        if name in BACKENDS[backend].driver_sets:
            raise ConfigurationError(
                f"create_engine(): connect_args={{{name!r}: ...}}: the engine sets {name} "
                f"itself; {BACKENDS[backend].driver_sets[name]}"
            )
    kwargs["connect_args"] = connect_args
    if url.file:  # options the engine itself checks (no driver connect() to ask)
        kwargs.update(_file_options(url, dict(options)))
        return kwargs
    kwargs.update((name, options[name]) for name in BACKENDS[backend].own_options if name in options)
    accepted = url_option_names() if url_option_names is not None else None
    for name in url.options:
        _check_text_option(backend, name, url.options[name], f"?{name}= in the URL")
        if name in BACKENDS[backend].driver_sets:
            raise ConfigurationError(
                f"create_engine(): ?{name}= in the URL: the engine sets {name} itself; "
                f"{BACKENDS[backend].driver_sets[name]}"
            )
        if name in COMMON:
            raise ConfigurationError(
                f"create_engine(): ?{name}= in the URL: {name} is a keyword of create_engine(), "
                f"not a URL option; write create_engine(url, {name}=...)"
            )
        # A name the driver's connect() takes is its own, even where another database's
        # engine has a keyword of that name (connect_timeout: PostgreSQL's and PyMySQL's).
        if (name not in accepted) if accepted is not None else _owner(name) not in (None, backend):
            raise _refuse(name, backend, f"?{name}= in the URL",
                          accepted if accepted is not None else frozenset())
    return kwargs


def _load(module: str, name: str) -> Any:
    if ":" in name:
        module, name = name.split(":")
    return getattr(importlib.import_module(f"{__package__}.drivers.{module}"), name)


def _checked(url: DatabaseURL, pool_size: object, pool_timeout: object, connect_args: object,
             options: Mapping[str, Any]) -> dict[str, Any]:
    drivers = BACKENDS[url.backend]
    names = drivers.url_option_names
    return driver_options(url, pool_size=pool_size, pool_timeout=pool_timeout,
                          connect_args=connect_args, options=options,
                          url_option_names=_load(drivers.module, names) if names else None)


def driver_for(url: DatabaseURL, *, pool_size: object, pool_timeout: object,
               connect_args: object, options: Mapping[str, Any]) -> Any:
    """The blocking driver of `url`, made with its options once every one is checked."""
    kwargs = _checked(url, pool_size, pool_timeout, connect_args, options)
    drivers = BACKENDS[url.backend]
    return _load(drivers.module, drivers.blocking)(url, **kwargs)


def async_driver_for(url: DatabaseURL, *, pool_size: object, pool_timeout: object,
                     connect_args: object, options: Mapping[str, Any]) -> Any:
    """The asyncio driver of `url`, made with its options once every one is checked."""
    kwargs = _checked(url, pool_size, pool_timeout, connect_args, options)
    drivers = BACKENDS[url.backend]
    return _load(drivers.module, drivers.asyncio)(url, **kwargs)
