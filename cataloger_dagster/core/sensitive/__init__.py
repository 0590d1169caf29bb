"""Personal and secret data: which columns hold it (with evidence), and what of it may leave."""
