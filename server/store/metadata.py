"""The one ``MetaData`` of the game database with every table in it: the tables of
:mod:`server.store.schema`, :mod:`server.store.tournament_tables` and
:mod:`server.store.correspondence_tables` (a table joins the metadata when its module is
imported, which this module does). Alembic's environment (``migrations/env.py``) compares the
migrations with it, and so does ``tests/store/test_store_migrations.py``.
"""

from __future__ import annotations

from server.store import correspondence_tables, schema, tournament_tables

__all__ = ["TABLE_MODULES", "metadata"]

TABLE_MODULES = (schema, tournament_tables, correspondence_tables)
"""Every module that declares tables: a new one is added here, or alembic does not see it."""

metadata = schema.Base.metadata
"""Every table of the game database (the base's ``MetaData``, once ``TABLE_MODULES`` are
imported)."""
