#!/usr/bin/env python3
"""Fails when a Catch2 test case under tests/ asserts nothing that could fail.

A test case needs at least one CHECK/REQUIRE other than *_NOTHROW and other
than CHECK(true), or a call to a helper whose name begins with Check, Expect
or Require (the helpers assert). Printing is not asserting.
Usage: scripts/check_test_assertions.py [tests-dir]
"""
import pathlib
import re
import sys

CASE = re.compile(r'^(TEST_CASE|TEMPLATE_TEST_CASE|SCENARIO)\(', re.M)
ASSERT = re.compile(r'\b((?:CHECK|REQUIRE)\w*)\((.*)')
HELPER = re.compile(r'\b(Check|Expect|Require)\w*\(')


def weak_cases(path):
    text = path.read_text()
    starts = [m.start() for m in CASE.finditer(text)] + [len(text)]
    for begin, end in zip(starts, starts[1:]):
        body = text[begin:end]
        strong = [a for a in ASSERT.findall(body)
                  if a[0] not in ('CHECK_NOTHROW', 'REQUIRE_NOTHROW') and a[1].strip(' );') != 'true']
        if not strong and not HELPER.search(body):
            yield body.split('\n', 1)[0]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent / 'tests')
    bad = [(p, name) for p in sorted(root.rglob('*_test.cc')) for name in weak_cases(p)]
    for p, name in bad:
        print(f'{p}: {name}: asserts nothing that could fail')
    print(f'{len(bad)} test cases without a real assertion')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
