#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make docs: the generated parts of docs/report.md, from the programs
# themselves: a sample report (the golden collective run of the unit tests,
# rendered by rdmactl report) and every column and figure (the metric table,
# rdmactl report --metrics) and every field of report.json (its JSON
# Schema's descriptions, scripts/schema_doc.py). Each part lies between
#   <!-- generated: NAME (make docs) -->  and  <!-- end: NAME -->
# --check writes nothing: it exits 1, saying which part, when the page is
# not what make docs would write (a test in make test runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
RDMACTL=${RDMACTL:-build/bin/rdmactl}
PAGE=docs/report.md
check=0
[ "${1:-}" = --check ] && check=1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

cp tests/unit/golden/collective.report.json "$W/report.json"
{ echo '```'; "$RDMACTL" report "$W"; echo '```'; } > "$W/sample"
"$RDMACTL" report --metrics > "$W/metrics"
python3 scripts/schema_doc.py schemas/report.schema.json > "$W/fields"

# the page with each part's lines replaced by its file
awk -v dir="$W" '
	/^<!-- generated: [a-z]+ \(make docs\) -->$/ {
		print; name = $3; f = dir "/" name
		while ((getline l < f) > 0) print l
		close(f); skip = 1; next
	}
	/^<!-- end: [a-z]+ -->$/ { skip = 0 }
	!skip { print }' "$PAGE" > "$W/page"
for n in sample metrics fields; do
	grep -q "^<!-- generated: $n (make docs) -->$" "$PAGE" ||
		{ echo "mkdocs: $PAGE has no part '$n'" >&2; exit 1; }
done
if [ $check = 1 ]; then
	if ! diff -q "$PAGE" "$W/page" >/dev/null; then
		echo "mkdocs: $PAGE is stale: 'make docs' rewrites it:" >&2
		diff -u "$PAGE" "$W/page" | head -n 20 >&2
		exit 1
	fi
	exit 0
fi
cmp -s "$PAGE" "$W/page" || cp "$W/page" "$PAGE"
