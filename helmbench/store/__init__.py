"""The results store (build/results.db): schema, migrations and the queries stages share.

See SCHEMA.md for the tables. Store is the only door to SQL: `open_db` is the way in for the
writer (every connection has the same pragmas and an up-to-date schema), `open_readonly` the one
way in for readers, and every read the later stages need is a named query in
`helmbench.store.queries`. `Connection`, `Row` and `DatabaseError` name SQLite's types for
stages that pass a connection along or catch its failures without importing sqlite3.
"""

from sqlite3 import Connection, Row
from sqlite3 import Error as DatabaseError

from helmbench.store.db import DEFAULT_DB, connect, open_db, open_existing, open_reader, open_readonly
from helmbench.store.migrations import MIGRATIONS, migrate

__all__ = ["Connection", "DEFAULT_DB", "DatabaseError", "MIGRATIONS", "Row", "connect", "migrate", "open_db",
           "open_existing", "open_reader", "open_readonly"]
