#!/usr/bin/env python3
"""Docs quote examples that CI builds: every code block in a Markdown file
that follows a line naming `examples/<topic>/<file>` (or a file of the
project in `tests/consumer/project/`, which the integration tests build)
must be that file, verbatim. Usage: check_quotes.py SOURCE_ROOT DOC..."""
import pathlib
import re
import sys

QUOTE = re.compile(r"`((?:examples|tests/consumer/project)/[\w/.-]+)`:?\s*\n+```\w*\n(.*?)```", re.S)


def main(root, docs):
    root = pathlib.Path(root)
    failures = 0
    quoted = 0
    for doc in docs:
        text = (root / doc).read_text()
        for path, block in QUOTE.findall(text):
            quoted += 1
            if (root / path).read_text() != block:
                print(f"{doc}: the block quoting {path} differs from the file")
                failures += 1
    if quoted == 0:
        print("no quoted examples found: the check would prove nothing")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
