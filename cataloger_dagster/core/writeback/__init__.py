"""Writing the understanding's descriptions back to the database as comments, and reading the
comments a database already holds (plan.py: what changes and the diff; sql.py: each dialect's
statements and queries; mysql.py: a MySQL column's definition, which its comment is part of;
ledger.py: what the catalog wrote before; session.py: one table's writeback over a connection)."""
