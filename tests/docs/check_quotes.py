#!/usr/bin/env python3
"""Docs quote code that CI builds. Usage: check_quotes.py SOURCE_ROOT DOC...

A fenced block is a quote when the text before it ends by naming, in
backticks and followed by a colon, a file CI builds: one under
`examples/`, one of the project in `tests/consumer/project/`, which the
integration tests build, or a public header under `include/tact/` (not
`include/tact/detail/`), which every build compiles. There are two kinds:

* a whole-file quote: the block is that file, verbatim. A header is never
  quoted whole, only in excerpts.

      ... the whole program, `examples/hello/hello.cpp`:

* an excerpt, when the name follows the words "excerpt of" (a line break
  may come between them): the block is a run of whole, consecutive lines
  of the file, verbatim, except that the indentation the quoted lines
  share may be left out.

      ... (an excerpt of `examples/timers/session.cpp`):
      ... (an excerpt of `include/tact/widgets/race.hpp`):

Every ```cpp block must be one or the other; other blocks (shell commands,
Meson) may stand alone. The check fails when a quote differs from its
file, when a ```cpp block quotes nothing, and when the docs given hold no
quote at all (it would then prove nothing)."""
import pathlib
import re
import sys

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
# What a quote's introduction ends with.
SOURCE = re.compile(r"(excerpt of\s+)?`((?:examples|tests/consumer/project|include/tact)/[\w/.-]+)`\)?:\Z",
                    re.I)
# Headers are quoted only in excerpts, and only the public ones.
HEADER = re.compile(r"include/tact/(?!detail/)[\w/.-]+\.hpp\Z")


def dedented(lines):
    """`lines` without the indentation their non-blank lines share."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] if line.strip() else "" for line in lines]


def excerpt_problem(block, source):
    """None if `block` is a run of whole lines of `source` (up to a shared
    indentation), else what went wrong."""
    want = dedented(block.splitlines())
    lines = source.splitlines()
    if not want:
        return "it is empty"
    best, best_at = 0, None  # the longest run of the excerpt's first lines found
    for at in range(len(lines) - len(want) + 1):
        window = dedented(lines[at:at + len(want)])
        if window == want:
            return None
        matched = next(i for i, (a, b) in enumerate(zip(window, want)) if a != b)
        if matched > best:
            best, best_at = matched, at
    if best_at is None:
        return f"its first line is nowhere in the file:\n    {want[0].strip()}"
    return (f"it follows the file from line {best_at + 1} until its line {best + 1}:\n"
            f"    excerpt: {want[best].strip()}\n"
            f"    file:    {lines[best_at + best].strip()}")


def check(root, doc):
    """Returns (quotes found, problems) for one doc."""
    text = (root / doc).read_text()
    quotes, problems = 0, []
    for block in BLOCK.finditer(text):
        language, code = block.groups()
        line = text.count("\n", 0, block.start()) + 1
        where = f"{doc}:{line}"
        named = SOURCE.search(text[:block.start()].rstrip()[-400:])
        if named is None:
            if language == "cpp":
                problems.append(f"{where}: a cpp block that quotes no file CI builds (the text "
                                "before it must end with `examples/<topic>/<file>`:, or with "
                                "excerpt of `examples/<topic>/<file>`: for part of the file, "
                                "or with excerpt of `include/tact/<header>.hpp`: for part of "
                                "a public header)")
            continue
        quotes += 1
        excerpt, path = named.groups()
        if path.startswith("include/") and not HEADER.match(path):
            problems.append(f"{where}: the block quotes {path}, which is not a public header "
                            "(a .hpp under include/tact/, outside include/tact/detail/)")
            continue
        if path.startswith("include/") and not excerpt:
            problems.append(f"{where}: the block quotes all of {path}, but a header is quoted only "
                            "in part (introduce it with: excerpt of `" + path + "`:)")
            continue
        if not (root / path).is_file():
            problems.append(f"{where}: the block quotes {path}, which does not exist")
            continue
        source = (root / path).read_text()
        if excerpt:
            problem = excerpt_problem(code, source)
            if problem is not None:
                problems.append(f"{where}: the excerpt of {path} is not in the file: {problem}")
        elif code != source:
            problems.append(f"{where}: the block quoting {path} differs from the file (for a part "
                            "of it, introduce it with: excerpt of `" + path + "`:)")
    return quotes, problems


def main(root, docs):
    root = pathlib.Path(root)
    quotes, failed = 0, False
    for doc in docs:
        found, problems = check(root, doc)
        quotes += found
        failed = failed or bool(problems)
        for problem in problems:
            print(problem)
    if quotes == 0:
        print("no quotes found in " + " ".join(docs) + ": the check would prove nothing")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
