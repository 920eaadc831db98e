"""Datasette plugin: only plain SQL on every connection Datasette opens (`helmbench serve`, and a public host).

Why: SQLite as Python ships it here is built with the FTS3 tokenizer interface on, so a visitor's
query `select fts3_tokenizer('simple')` returns a native address, and the two-argument form
registers an arbitrary function pointer on the connection (which the next full-text query calls).
Python's sqlite3 cannot turn the interface off (`SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER` is not
exposed), so an authorizer refuses those functions when a statement is prepared, whatever their
arguments. `helmbench serve` registers this module with Datasette itself; `helmbench serve
--publish DIR` copies this file to `DIR/plugins/`, and a public host must be started with
`--plugins-dir DIR/plugins` (e.g. `datasette publish cloudrun … --plugins-dir DIR/plugins`) to keep
the interface off there too. This file imports nothing but Datasette, so that copy runs anywhere.
"""

from datasette import hookimpl

# sqlite3's constants, by value (this file is copied to hosts, and imports only Datasette)
SQLITE_OK = 0
SQLITE_DENY = 1
SQLITE_FUNCTION = 31

#: Functions a visitor's SQL may not call: they reach native pointers or load native code.
REFUSED_FUNCTIONS = frozenset({"fts3_tokenizer", "load_extension"})


def authorizer(action, arg1, arg2, database, trigger):
    """SQLite's authorizer callback: deny a call of a refused function, allow everything else."""
    if action == SQLITE_FUNCTION and (arg2 or "").lower() in REFUSED_FUNCTIONS:
        return SQLITE_DENY
    return SQLITE_OK


@hookimpl
def prepare_connection(conn):
    conn.set_authorizer(authorizer)
