"""The results store (build/results.db): schema, migrations and the queries stages share.

See SCHEMA.md for the tables; `open_db` is the only way in, so every connection has the
same pragmas and an up-to-date schema.
"""

from helmbench.store.db import DEFAULT_DB, connect, open_db, open_existing, open_reader, open_readonly
from helmbench.store.migrations import MIGRATIONS, migrate

__all__ = ["DEFAULT_DB", "MIGRATIONS", "connect", "migrate", "open_db", "open_existing", "open_reader",
           "open_readonly"]
