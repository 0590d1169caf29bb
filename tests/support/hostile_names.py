"""Names an attacker might give a table or column, for the tests that check a name never becomes code."""

PAYLOAD = "__import__('os').system('id')"
HOSTILE = [
    f"note\n{PAYLOAD}\n#",
    f"cr\r{PAYLOAD}\r#",
    f"u\u2028{PAYLOAD}\u2029#",
    f"ff\x0c{PAYLOAD}\x0b\x1c\x1d\x1e\x85#",
    f"q'''\"\"\"\\'\\\"{PAYLOAD}",
    f"x\\'; {PAYLOAD} #",
    f"ctl\x01\x1b[31m{PAYLOAD}",
    f"nul\x00{PAYLOAD}",
    f"bidi\u202e{PAYLOAD}\u2066",
    "\\g<0>\\1 \\n",               # what re.sub's templates would have expanded
    f"x\n# block: setup\n{PAYLOAD}",  # a forged marker
    "café 日本",
]
