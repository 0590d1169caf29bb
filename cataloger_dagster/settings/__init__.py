"""The settings: every CATALOGER_* variable in one object (model.py), read once and passed on;
the resources built from them (factories.py); the other programs' variables the package looks at
(environment.py); and the documentation generated from them (documentation.py)."""
