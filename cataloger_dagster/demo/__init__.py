"""The demo database: realistic related tables with planted, documented defects."""

from cataloger_dagster.demo.generator import create_demo_database
from cataloger_dagster.demo.spec import ANSWER_KEY_PATH, answer_key, load_answer_key

__all__ = ["create_demo_database", "answer_key", "load_answer_key", "ANSWER_KEY_PATH"]
