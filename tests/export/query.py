"""Runs the DuckDB queries of docs/analytics.md over a `stammtisch export` directory.

Usage: query.py DIR

Reads the blocks fenced ```sql duckdb from docs/analytics.md (so the docs cannot drift from
what the test checks): the one labelled `-- duckdb setup` first, with its directory
`export/` replaced by DIR, then every `-- duckdb: NAME` block. Prints one JSON object:

    {"duckdb": VERSION,
     "queries": {NAME: [row, ...]},            # each row a {column: value} object
     "tables": {TABLE: [row, ...]},            # every row of events, games, seats, results
     "columns": {TABLE: [[name, type], ...]}}  # as DuckDB reads the Parquet files

Run by tests/api/export.rs with target/export-venv/bin/python (scripts/export-venv).
"""

import datetime
import decimal
import json
import pathlib
import sys

import duckdb

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "analytics.md"
TABLES = ["events", "games", "seats", "results"]


def blocks():
    """(label, sql) of each ```sql duckdb block."""
    found, current = [], None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if current is None:
            if line.strip() == "```sql duckdb":
                current = []
        elif line.strip() == "```":
            first = current[0] if current else ""
            if first.startswith("-- duckdb setup"):
                label = "setup"
            elif first.startswith("-- duckdb: "):
                label = first[len("-- duckdb: "):].strip()
            else:
                sys.exit(f"a DuckDB block of {DOCS} starts without a label: {first!r}")
            found.append((label, "\n".join(current)))
            current = None
        else:
            current.append(line)
    if current is not None:
        sys.exit(f"an unclosed ```sql duckdb block in {DOCS}")
    return found


def plain(value):
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def rows(con, sql):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [{n: plain(v) for n, v in zip(names, row)} for row in cur.fetchall()]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: query.py DIR")
    export = pathlib.Path(sys.argv[1]).resolve()
    con = duckdb.connect()
    out = {"duckdb": duckdb.__version__, "queries": {}, "tables": {}, "columns": {}}
    found = blocks()
    setup = [sql for label, sql in found if label == "setup"]
    if len(setup) != 1:
        sys.exit(f"{DOCS} needs exactly one `-- duckdb setup` block, has {len(setup)}")
    con.execute(setup[0].replace("'export/", f"'{export}/"))
    for label, sql in found:
        if label != "setup":
            out["queries"][label] = rows(con, sql)
    for table in TABLES:
        out["tables"][table] = rows(con, f"SELECT * FROM {table} ORDER BY ALL")
        out["columns"][table] = [
            [r["column_name"], r["column_type"]] for r in rows(con, f"DESCRIBE {table}")
        ]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
