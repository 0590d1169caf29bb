from commented_tables import commented  # noqa: F401 - the fixture, shared with the command's tests
