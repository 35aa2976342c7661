#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install every Debian package the build, the tests and the testbed need.
# Idempotent: when all packages are present it only runs dpkg-query (~0.1 s).
set -euo pipefail

PKGS=(
	# build
	build-essential pkg-config clang llvm bpftool libbpf-dev linux-libc-dev libc6-dev
	libibverbs-dev librdmacm-dev libnl-3-dev libnl-route-3-dev libyaml-dev
	libncurses-dev libjansson-dev libisal-dev zlib1g-dev libssl-dev
	# report.html's charts: dygraphs, inlined into rdmactl at build time
	libjs-dygraphs
	# SoftRoCE user space (host side and copied into the VM image)
	rdma-core ibverbs-providers ibverbs-utils perftest iproute2 kmod
	# third-party RDMA programs for exec workloads (copied into the VM image)
	rdmacm-utils qperf ucx-utils libfabric-bin
	# storage stacks under faults: NVMe-oF's host tools and fio (into the VM image)
	fio nvme-cli
	# MPI over UCX: Open MPI's mpirun, orted and libraries (into the VM
	# image), mpicc for examples/mpi_bench.c
	openmpi-bin libopenmpi-dev
	# NFS over RDMA and TCP: the server's and client's programs are unpacked
	# from nfs-kernel-server and nfs-common (never installed: no nfsd or
	# rpcbind runs on this machine) and need
	libtirpc3 libtirpc-common libcom-err2 libkeyutils1 netbase
	# Slurm on the per-node testbed: slurmctld, slurmd and the client are
	# unpacked from Debian's slurm packages (never installed: no Slurm
	# daemon runs on this machine) and need
	libhwloc15 liblz4-1 libnuma1 libudev1
	# testbed: VM image and boot
	qemu-system-x86 busybox-static cpio xz-utils zstd
	# ssh: rdmactl's client; the VM's sshd is unpacked from openssh-server
	# (downloaded, never installed: no sshd runs on this machine) and needs
	openssh-client libwrap0 libkrb5-3 libgssapi-krb5-2
	# tests (libFuzzer's runtime for the fuzz harnesses, valgrind over the controller)
	tmux jq python3 python3-jsonschema chromium nodejs libclang-rt-14-dev valgrind
	# man pages: built with groff's man macros, checked with man and col
	groff-base man-db bsdextrautils bash-completion
	# the agent's OpenMetrics endpoint, read by Prometheus' own parser
	python3-prometheus-client curl
	# packet traces: tshark checks the pcapng files and their RoCE dissection
	tshark
	# the XDP forwarder's tests: ethtool (a veth takes redirected frames
	# only with NAPI on). Not xdp-tools: 1.3.1 does not load on 6.18
	ethtool
)

# the tests' npm packages, pinned by their locks: HdrHistogramJS decodes the
# .hlog files (tests/hlog); playwright-core drives Debian's Chromium over
# report.html (tests/html; it downloads no browser)
npm_deps() {
	local d t
	for t in hlog:hdr-histogram-js html:playwright-core; do
		d="$(dirname "$0")/../tests/${t%%:*}"
		[ -d "$d/node_modules/${t#*:}" ] && continue
		command -v npm >/dev/null || { echo "deps: no npm (package nodejs)" >&2; return 1; }
		echo "deps: npm ci in tests/${t%%:*}"
		(cd "$d" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
	done
}

missing=()
for p in "${PKGS[@]}"; do
	case $p in \#*) continue ;; esac
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = ii ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	npm_deps
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root (apt-get install)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -q
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
npm_deps
echo "deps: done"
