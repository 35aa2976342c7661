#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.json, field by field, as Markdown: from schemas/report.schema.json,
its descriptions the words. make docs puts it in docs/report.md. Exit 1,
naming them, when a field has no description (the docs test fails then)."""
import json
import sys

SCHEMA = sys.argv[1] if len(sys.argv) > 1 else 'schemas/report.schema.json'
s = json.load(open(SCHEMA))
missing = []


def kind(n):
    if '$ref' in n:
        return n['$ref'].split('/')[-1]
    if 'const' in n:
        return json.dumps(n['const'])
    if 'enum' in n:
        return ' \\| '.join(str(x) for x in n['enum'])
    if 'oneOf' in n:
        return ' or '.join(kind(x) for x in n['oneOf'])
    t = n.get('type', '')
    if isinstance(t, list):
        t = ' or '.join(t)
    if t == 'array' and isinstance(n.get('items'), dict):
        inner = kind(n['items'])
        return f'array of {inner}' if inner else 'array'
    return t


def rows(node, path, out):
    for k, v in (node.get('properties') or {}).items():
        if not isinstance(v, dict):
            continue
        p = f'{path}.{k}' if path else k
        d = v.get('description')
        if not d:
            missing.append(p)
        out.append(f'| `{p}` | {kind(v)} | {d or "(undocumented)"} |')
        rows(v, p, out)
        it = v.get('items')
        while isinstance(it, dict) and 'items' in it and 'properties' not in it:
            p += '[]'
            it = it['items']
        if isinstance(it, dict):
            rows(it, p + '[]', out)


def table(title, node, path='', describe=True):
    out = []
    rows(node, path, out)
    if not out:
        return
    print(f'#### {title}\n')
    if describe and node.get('description'):
        print(node['description'] + '\n')
    print('| field | type | what it is |\n|---|---|---|')
    print('\n'.join(out) + '\n')


print('### report.json, field by field\n')
print(s['description'] + '\n')
table('The run', s, describe=False)
for name, d in s.get('$defs', {}).items():
    table(f'`{name}`', d)
if missing:
    print(f'schema_doc: {len(missing)} fields have no description: ' + ', '.join(missing[:20]),
          file=sys.stderr)
    sys.exit(1)
