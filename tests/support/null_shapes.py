"""Tables whose NULLs are the data's structure, and their look-alikes where they are not:
DuckDB SQL, deterministic (hashes of the row number, no random generator)."""

from __future__ import annotations

# a hurricane's category is NULL exactly when its wind is below hurricane force (65 knots here);
# its pressure is missing on scattered rows: a real gap
STORMS = """
CREATE TABLE storms AS
SELECT i AS obs, 'storm ' || (i // 40) AS name, 1975 + i % 46 AS year, wind,
       CASE WHEN wind >= 65 THEN 'hurricane' WHEN wind >= 35 THEN 'tropical storm' ELSE 'tropical depression' END
         AS status,
       CASE WHEN wind < 65 THEN NULL WHEN wind < 85 THEN 1 WHEN wind < 100 THEN 2 ELSE 3 END AS category,
       CASE WHEN hash(i) % 17 = 0 THEN NULL ELSE 940 + (hash(i * 3) % 70)::INTEGER END AS pressure
FROM (SELECT i, 10 + 5 * (hash(i + 11) % 30)::INTEGER AS wind FROM range(2000) r(i))
"""

# two measures were only taken from 2004 on: NULL on every row before
BEFORE_A_YEAR = """
CREATE TABLE readings AS
SELECT i AS reading, DATE '1995-01-01' + INTERVAL (i) DAY AS day,
       10 + (hash(i) % 20)::INTEGER AS temperature,
       CASE WHEN DATE '1995-01-01' + INTERVAL (i) DAY < DATE '2004-01-01' THEN NULL ELSE (hash(i * 5) % 300)::INTEGER END
         AS ozone,
       CASE WHEN DATE '1995-01-01' + INTERVAL (i) DAY < DATE '2004-01-01' THEN NULL ELSE (hash(i * 7) % 90)::INTEGER END
         AS humidity
FROM range(5000) r(i)
"""


def chart_sql(weeks: int = 76, entries: int = 317) -> str:
    """A chart's positions, one column per week: an entry's weeks are NULL from the week it left."""
    cols = ", ".join(f"CASE WHEN {w} <= stay THEN 1 + (hash(i * {w}) % 100)::INTEGER END AS wk{w}" for w in range(1, weeks + 1))
    return (f"CREATE TABLE chart AS SELECT 'artist ' || i AS artist, 'track ' || i AS track, {cols} "
            f"FROM (SELECT i, 3 + (hash(i) % {weeks - 2})::INTEGER AS stay FROM range({entries}) r(i))")


def scattered_family_sql(columns: int = 12, rows: int = 600) -> str:
    """Counts by age group, each missing on its own scattered rows (not reported): one cause."""
    groups = [f"m{a}" for a in range(columns // 2)] + [f"f{a}" for a in range(columns // 2)]
    cols = ", ".join(f"CASE WHEN hash(i * {k + 3}) % 9 = 0 THEN NULL ELSE (hash(i + {k}) % 500)::INTEGER END AS new_sp_{g}14"
                     for k, g in enumerate(groups))
    return f"CREATE TABLE cases AS SELECT 'country ' || (i % 50) AS country, 1980 + i // 50 AS year, {cols} " \
           f"FROM range({rows}) r(i)"


# a dose's unit is set wherever the dose is, but on three rows
DOSES = """
CREATE TABLE doses AS
SELECT i AS prescription, CASE WHEN i % 4 = 0 THEN NULL ELSE 1 + (hash(i) % 500)::INTEGER END AS dose,
       CASE WHEN i % 4 = 0 OR i IN (5, 9, 13) THEN NULL ELSE ['mg', 'ml', 'g'][1 + i % 3] END AS unit
FROM range(800) r(i)
"""

# two columns missing independently of each other: no rule between them
INDEPENDENT = """
CREATE TABLE survey AS
SELECT i AS answer, CASE WHEN hash(i) % 10 = 0 THEN NULL ELSE (hash(i * 3) % 100)::INTEGER END AS income,
       CASE WHEN hash(i * 7) % 3 = 0 THEN NULL ELSE (hash(i * 11) % 5)::INTEGER END AS satisfaction
FROM range(3000) r(i)
"""
