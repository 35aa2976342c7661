#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sentence lengths of the pages users read (README.md, docs/*.md,
profiles/README.md).

Prose only: code blocks, tables, headings and HTML comments are left out;
a list item is a sentence of its own; a code span counts as one word.
Prints each page's count, median and longest, and the longest sentences
over the bound. Exit 1 when the median is over MEDIAN_MAX or a sentence is
over LONGEST_MAX words.

The bounds: STYLE.md asks for "about 20 words" a sentence, so the median
may be 20 at most. A sentence of more than 40 words, twice that, is one a
reader has to take apart; none is left in these pages, and none may come
back.
"""
import re
import statistics
import sys

MEDIAN_MAX = 20
LONGEST_MAX = 40


def sentences(path):
    text = re.sub(r'```.*?```', '', open(path, encoding='utf-8').read(), flags=re.S)
    paras, cur = [], []
    for line in text.split('\n'):
        s = line.strip()
        if not s or s.startswith(('#', '|', '<!--')):
            if cur:
                paras.append(' '.join(cur))
                cur = []
            continue
        if re.match(r'^([-*]|\d+\.) ', s):
            if cur:
                paras.append(' '.join(cur))
                cur = []
            s = re.sub(r'^([-*]|\d+\.) ', '', s)
        cur.append(s)
    if cur:
        paras.append(' '.join(cur))
    out = []
    for p in paras:
        p = re.sub(r'`[^`]*`', 'X', p)
        p = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', p)
        for s in re.split(r'(?<=[.!?:])\s+(?=[A-Z(`"])', p):
            if s.split():
                out.append((len(s.split()), s))
    return out


def main(paths):
    allw, over = [], []
    for path in paths:
        ss = sentences(path)
        ws = [w for w, _ in ss]
        allw += ws
        over += [(w, path, s) for w, s in ss if w > LONGEST_MAX]
        print(f"{path}: {len(ws)} sentences, median {statistics.median(ws):g}, "
              f"longest {max(ws)}")
    med, top = statistics.median(allw), max(allw)
    print(f"all: {len(allw)} sentences, median {med:g} words (at most {MEDIAN_MAX}), "
          f"longest {top} (at most {LONGEST_MAX})")
    for w, path, s in sorted(over, reverse=True)[:10]:
        print(f"  {path}: {w} words: {s[:160]}")
    return 0 if med <= MEDIAN_MAX and top <= LONGEST_MAX else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
