"""A DuckDB file whose classes of personal data a person would correct: a column of company
names the classifier takes for people's names, a column of people's names it misses (its name
says nothing), and a column of e-mails it rightly finds."""

from __future__ import annotations

from pathlib import Path

import duckdb

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus"]
FIRMS = ["Acme Holdings", "Globex Trading", "Initech Systems", "Umbrella Foods", "Stark Metals"]
ROWS = 120


def make_accounts(path: Path, tables: tuple[str, ...] = ("accounts",)) -> Path:
    """``tables``, each holding the same columns: 70% of customer_name are firms' names (words of
    letters, capitalised), the rest codes."""
    con = duckdb.connect(str(path))
    for table in tables:
        con.execute(f'create table "{table}" (id integer, customer_name varchar, contact varchar, email varchar)')
        rows = []
        for i in range(ROWS):
            firm = FIRMS[i % 5] if i % 10 < 7 else f"firm-{i:03d} ltd"
            rows.append((i, firm, f"{FIRST[i % 8]} {LAST[(i * 3) % 8]}", f"{FIRST[i % 8].lower()}{i}@example.org"))
        con.executemany(f'insert into "{table}" values (?, ?, ?, ?)', rows)
    con.close()
    return path
