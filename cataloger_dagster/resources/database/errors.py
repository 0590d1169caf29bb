"""The database's errors: each message says what to do, and never holds a credential."""

from __future__ import annotations


class DatabaseError(RuntimeError):
    """The database or one of its tables cannot be used; the message says what to do."""


class NoTablesError(DatabaseError):
    """The database (or the schema the URL names) holds no table to catalog."""
