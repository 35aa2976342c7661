#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The newest Debian 12 kernel of a series that apt lists, as
# `rdmactl testbed up --kernel NODE=VERSION` takes it:
#   scripts/newest-kernel.sh 6.12   ->   6.12.118+deb12-amd64
# Prints nothing (and exits 1) when apt lists none.
set -euo pipefail
series=${1:?usage: newest-kernel.sh SERIES (e.g. 6.12)}
v=$(apt-cache search --names-only "^linux-image-${series//./\\.}\\.[0-9]+\\+deb12-amd64\$" 2>/dev/null |
	awk '{print $1}' | sed 's/^linux-image-//' | sort -V | tail -n 1)
[ -n "$v" ] && echo "$v"
