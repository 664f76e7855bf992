#!/usr/bin/env python3
"""Runs every query of docs/export.md ("Queries, in DuckDB and in Spark") on a Parquet
dataset written by `schedlens export --format parquet`, in DuckDB and in Spark (pyspark,
local mode), prints each engine's answers and checks that they are the same.

    fleet_queries.py DS [--engines auto|duckdb|spark|duckdb,spark] [--time] [--docs FILE]

The views and queries are read from the docs (the blocks after `<!-- fleet: ... -->`),
so the docs and what is tested cannot drift apart. `auto` (the default) is DuckDB, and
Spark too when pyspark and Java are present (else it says why not). Numbers are compared
to 9 significant digits (engines sum floating point numbers in different orders). Exit
status: 0 same answers, 1 they differ or a query failed, 2 an engine asked for is missing.
`--time` prints each query's time per engine (on stderr, so the answers stay comparable).

Environment: SPARK_MASTER (default local[2]), SPARK_DRIVER_MEMORY (default 2g),
SPARK_SHUFFLE_PARTITIONS (default 8), SPARK_JAVA_OPTIONS (the JVM's options; on small
datasets `-XX:TieredStopAtLevel=1`, compiling with the quick JIT only, halves Spark's
time: 26 s instead of 50 s for 200 small runs, start included).
"""

import argparse
import decimal
import os
import re
import shutil
import sys
import time

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "export.md")


def blocks(docs_text):
    """The code blocks that follow each `<!-- fleet: NAME -->` marker, by NAME."""
    found = {}
    for match in re.finditer(r"<!-- fleet: ([a-z ]+) -->\s*```\w*\n(.*?)```", docs_text, re.S):
        found[match.group(1)] = match.group(2)
    for name in ("duckdb views", "spark views", "queries"):
        if name not in found:
            sys.exit(f"fleet_queries.py: the docs have no block marked `<!-- fleet: {name} -->`")
    return found


def split_queries(sql):
    """(title, query) pairs: statements separated by `;`, titled by their comment."""
    queries = []
    for statement in sql.split(";"):
        lines = statement.strip().splitlines()
        comments = [line[2:].strip() for line in lines if line.startswith("--")]
        body = "\n".join(line for line in lines if not line.startswith("--")).strip()
        if body:
            queries.append((" ".join(comments) if comments else body.splitlines()[0], body))
    return queries


def with_dataset(text, dataset):
    return text.replace("'DS/", f"'{dataset}/").replace('"DS/', f'"{dataset}/')


def canonical(value):
    """A value as both engines' answers are compared and printed."""
    if isinstance(value, decimal.Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    return value


def run_duckdb(views, queries, timings):
    import duckdb

    connection = duckdb.connect()
    connection.execute(views)
    answers = []
    for title, query in queries:
        start = time.perf_counter()
        rows = connection.execute(query).fetchall()
        timings.setdefault(title, {})["duckdb"] = time.perf_counter() - start
        answers.append([tuple(canonical(v) for v in row) for row in rows])
    return answers


def spark_missing():
    """Why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "python3 cannot import pyspark (pip install pyspark)"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no java on PATH (Spark needs Java 17 or later)"
    return None


def run_spark(views, queries, timings):
    from pyspark.sql import SparkSession

    start = time.perf_counter()
    spark = (
        SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[2]"))
        .appName("schedlens fleet queries")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # Few, small shuffles: the default 200 partitions would cost more than the work.
        .config("spark.sql.shuffle.partitions", os.environ.get("SPARK_SHUFFLE_PARTITIONS", "8"))
        # A table has a directory per run: list them on the driver rather than in a Spark
        # job of its own per table (which tripled the time to open the views of 200 runs).
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000000")
        .config("spark.driver.memory", os.environ.get("SPARK_DRIVER_MEMORY", "2g"))
        .config("spark.driver.extraJavaOptions", os.environ.get("SPARK_JAVA_OPTIONS", ""))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    exec(views, {"spark": spark})
    print(f"fleet_queries.py: Spark started in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    answers = []
    try:
        for title, query in queries:
            start = time.perf_counter()
            rows = spark.sql(query).collect()
            timings.setdefault(title, {})["spark"] = time.perf_counter() - start
            answers.append([tuple(canonical(v) for v in row) for row in rows])
    finally:
        spark.stop()
    return answers


def show(engine, queries, answers):
    print(f"== {engine}")
    for (title, _), rows in zip(queries, answers):
        print(f"-- {title} ({len(rows)} rows)")
        for row in rows:
            print("  " + " | ".join("null" if v is None else str(v) for v in row))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--engines", default="auto")
    parser.add_argument("--time", action="store_true")
    parser.add_argument("--docs", default=DOCS)
    args = parser.parse_args()
    with open(args.docs) as docs:
        found = blocks(docs.read())
    dataset = os.path.abspath(args.dataset)
    queries = [(title, with_dataset(query, dataset)) for title, query in split_queries(found["queries"])]
    engines = ["duckdb", "spark"] if args.engines == "auto" else args.engines.split(",")
    if "spark" in engines and (why := spark_missing()):
        if args.engines != "auto":
            print(f"fleet_queries.py: Spark cannot run: {why}", file=sys.stderr)
            return 2
        print(f"fleet_queries.py: Spark skipped: {why}", file=sys.stderr)
        engines.remove("spark")
    timings = {}
    answers = {}
    for engine in engines:
        try:
            if engine == "duckdb":
                answers[engine] = run_duckdb(with_dataset(found["duckdb views"], dataset), queries, timings)
            elif engine == "spark":
                answers[engine] = run_spark(with_dataset(found["spark views"], dataset), queries, timings)
            else:
                sys.exit(f"fleet_queries.py: unknown engine {engine} (duckdb, spark)")
        except Exception as error:  # the engine's own message says which query and why
            print(f"fleet_queries.py: {engine} failed: {error}", file=sys.stderr)
            return 1
        show(engine, queries, answers[engine])
    if args.time:
        print("query seconds: " + ", ".join(engines), file=sys.stderr)
        for title, _ in queries:
            spent = ", ".join(f"{timings[title][engine]:.2f}" for engine in engines)
            print(f"  {spent}  {title}", file=sys.stderr)
    if len(answers) == 2:
        first, second = answers["duckdb"], answers["spark"]
        differ = [title for (title, _), a, b in zip(queries, first, second) if a != b]
        for title in differ:
            print(f"fleet_queries.py: DuckDB and Spark differ on: {title}", file=sys.stderr)
        if differ:
            return 1
        print(f"== DuckDB and Spark give the same answers to all {len(queries)} queries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
