#!/usr/bin/env python3
"""Golden end-to-end outputs (tests/golden/*.tesh), compared byte for byte.

A case file, TESH-like (SimGrid's test-shell format, cut down):
    # what the case shows            (comments)
    ! mask json-keys                 (optional: compare the JSON's key structure only)
    ! expect return N[|M...]         (optional: the exit code(s) allowed, default 0)
    $ parasim ARGS                   (one command, run from the source tree)
    > expected stdout line           (every line of stdout, in order)

Masked in every case: "parasim_version" (changes with each release). Inputs
are named by paths relative to the source tree, so their provenance (name,
SHA-256) is stable. Run by ctest (golden); rewritten only by an explicit
command: scripts/update-goldens.sh.

Usage: scripts/golden.py PARASIM_BINARY [--update] [CASE.tesh ...]
"""
import json
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = ROOT / 'tests' / 'golden'
VERSION = re.compile(r'("parasim_version": )"[^"]*"')


def parse(path):
    case = {'mask': None, 'code': [0], 'command': None, 'expected': [], 'header': []}
    for line in path.read_text().split('\n'):
        if line.startswith('$ '):
            case['command'] = line[2:]
        elif line.startswith('> ') or line == '>':
            case['expected'].append(line[2:])
        elif line.startswith('! mask '):
            case['mask'] = line[len('! mask '):].strip()
        elif line.startswith('! expect return '):
            case['code'] = [int(c) for c in line[len('! expect return '):].split('|')]
        if not (line.startswith('> ') or line == '>'):
            case['header'].append(line)
    if case['command'] is None:
        raise SystemExit(f'{path}: no "$ parasim ..." line')
    while case['header'] and case['header'][-1] == '':
        case['header'].pop()
    return case


def key_structure(value):
    """The JSON's shape: objects keep their keys, arrays their first element, scalars their type."""
    if isinstance(value, dict):
        return {k: key_structure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [key_structure(value[0])] if value else []
    if value is None:
        return 'null'
    return type(value).__name__.replace('str', 'string').replace('float', 'number').replace('int', 'number')


def run(binary, case):
    args = shlex.split(case['command'])
    if args[0] != 'parasim':
        raise SystemExit(f'command must start with "parasim": {case["command"]}')
    proc = subprocess.run([binary] + args[1:], cwd=ROOT, capture_output=True, text=True)
    out = VERSION.sub(r'\1"(masked)"', proc.stdout)
    if case['mask'] == 'json-keys':
        out = json.dumps(key_structure(json.loads(out)), indent=2) + '\n'
    elif case['mask'] is not None:
        raise SystemExit(f'unknown mask {case["mask"]}')
    return proc.returncode, out, proc.stderr


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    update = '--update' in sys.argv[2:]
    files = [pathlib.Path(a) for a in sys.argv[2:] if a != '--update'] or sorted(CASES.glob('*.tesh'))
    failed = 0
    for path in files:
        case = parse(path)
        code, out, err = run(binary, case)
        lines = out.split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        else:
            lines.append('(no newline at end of output)')
        if update:
            if code not in case['code']:
                print(f'{path.name}: exit {code}, expected {case["code"]}; not updated\n{err}')
                failed += 1
                continue
            path.write_text('\n'.join(case['header'] + ['> ' + l if l else '>' for l in lines]) + '\n')
            continue
        if code not in case['code'] or lines != case['expected']:
            failed += 1
            print(f'FAIL {path.name}: exit {code} (expected {case["code"]})')
            for i, (got, want) in enumerate(zip(lines + [''] * len(case['expected']), case['expected'] + [''] * len(lines))):
                if got != want:
                    print(f'  first difference at line {i + 1}:\n    expected: {want!r}\n    got:      {got!r}')
                    break
            if err:
                print('  stderr: ' + err.strip()[:2000])
    verb = 'updated' if update else 'passed'
    print(f'{len(files) - failed} of {len(files)} golden cases {verb}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
