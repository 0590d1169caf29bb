"""The catalogued database: the resource (resource.py), how a URL connects (connection.py), MySQL's
types as the catalog reads them (mysql_types.py), the snapshots the sandbox reads (snapshots.py)
and the errors (errors.py)."""
