"""cataloger-dagster: a self-improving data catalog orchestrated by Dagster."""

__version__ = "0.1.0"
