#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the testbed VM image from Debian packages.
#
#   mkimage.sh --cache DIR --out INITRD --overlay-dir DIR [--kernel-pkg PKG]
#
# Two layers, concatenated into one initramfs (the kernel unpacks every cpio
# archive it finds in the initrd, later files win):
#   base     Debian's kernel modules (rdma_rxe & co), busybox, iproute2,
#            rdma-core with the rxe provider, perftest, bpftool, the RDMA
#            programs, fio and nvme-cli, and their shared libraries; the
#            NVMe-oF and NFS modules (loaded by rdmatb-nvmf and
#            rdmatb-nfs, not at boot), NFS's programs. Cached in DIR, keyed by a hash of every input
#            (this script, the kernel version, the package versions), so it
#            is rebuilt only when one of them changes.
#   overlay  the project's own files, staged by rdmactl in --overlay-dir
#            (init, topology script, rdma-agent, rdma-inject, BPF objects,
#            config, token). Shared libraries of its executables are added.
#            Rebuilt on every call: it is small (< 1 s).
#
# The kernel (linux-image-amd64's versioned package, or --kernel-pkg's,
# e.g. linux-image-6.12.118+deb12-amd64) is downloaded and unpacked under
# DIR, never installed: no hooks run, /boot is untouched.
# Prints KEY=VALUE lines on stdout: KVER, KERNEL, BASE, BASE_BUILT, BASE_S.
set -euo pipefail

CACHE= OUT= OVL= KPKG=
while [ $# -gt 0 ]; do
	case $1 in
	--cache) CACHE=$2; shift 2 ;;
	--kernel-pkg) KPKG=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--overlay-dir) OVL=$2; shift 2 ;;
	*) echo "mkimage: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$CACHE" ] && [ -n "$OUT" ] && [ -n "$OVL" ] || {
	echo "usage: mkimage.sh --cache DIR --out INITRD --overlay-dir DIR" >&2; exit 2; }

# Kernel modules the guest loads, in dependency order computed below.
# virtio_* and 9p for the control NIC; sch_*/cls_bpf/act_* for the injector.
MODULES="crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe rdma_cm rdma_ucm veth bridge
	 sch_ingress cls_bpf act_bpf sch_fq sch_prio sch_netem virtio_pci virtio_net"
# In the image, loaded when asked (/etc/rdmatb/storage.order: rdmatb-nvmf):
# NVMe over Fabrics, host and target, RDMA and TCP, and null_blk to back a
# namespace with memory.
STORAGE_MODULES="nvme_rdma nvme_tcp nvmet_rdma nvmet_tcp null_blk"
# And NFS's (/etc/rdmatb/nfs.order: rdmatb-nfs): the server, the NFSv4
# client, and RPC over RDMA for both (xprtrdma, svcrdma).
NFS_MODULES="nfsd nfsv4 rpcrdma"
BINS="ip tc bridge rdma bpftool ibv_devices ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong
      ibv_ud_pingpong ib_write_lat ib_write_bw ib_send_lat ib_send_bw ib_read_lat ib_read_bw
      ib_atomic_lat ib_atomic_bw rping ucmatose udaddy qperf ucx_perftest ucx_info fi_pingpong fi_info
      fio nvme orterun orted ssh"
PKGS="busybox-static iproute2 rdma-core ibverbs-providers ibverbs-utils perftest bpftool libc6
      rdmacm-utils qperf ucx-utils libfabric-bin fio nvme-cli openmpi-bin libopenmpi3 openssh-client"

log() { echo "mkimage: $*" >&2; }
die() { echo "mkimage: $*" >&2; exit 1; }
mkdir -p "$CACHE"

# ---------------------------------------------------------------- kernel
resolve_kpkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}
if [ -n "$KPKG" ]; then	# asked for: one Debian kernel package, by its exact name
	[[ $KPKG =~ ^linux-image-[0-9][A-Za-z0-9.+~-]*$ ]] || die "--kernel-pkg '$KPKG': not a linux-image-VERSION name"
	if ! apt-cache show "$KPKG" >/dev/null 2>&1; then
		apt-get -q update >/dev/null 2>&1 || true
		apt-cache show "$KPKG" >/dev/null 2>&1 ||
			die "$KPKG: no such package in apt's lists (apt-cache search '^linux-image-[0-9].*-amd64$' lists them)"
	fi
else
	KPKG=$(resolve_kpkg)
	if [ -z "$KPKG" ]; then
		apt-get -q update >/dev/null 2>&1 || true
		KPKG=$(resolve_kpkg)
	fi
	[ -n "$KPKG" ] || die "cannot resolve linux-image-amd64 to a versioned kernel package (apt lists?)"
fi
KVER=${KPKG#linux-image-}
KROOT=$CACHE/kernel-$KVER
VMLINUZ=$KROOT/boot/vmlinuz-$KVER
MODDIR=$KROOT/lib/modules/$KVER
if [ ! -f "$VMLINUZ" ] || [ ! -s "$MODDIR/modules.dep" ]; then
	log "downloading $KPKG (unpacked, not installed)"
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	chown _apt "$tmp" 2>/dev/null || true	# apt drops privileges for downloads
	(cd "$tmp" && apt-get download -q "$KPKG" >&2) || { rm -rf "$tmp"; die "apt-get download $KPKG failed"; }
	rm -rf "$KROOT.new"
	dpkg-deb -x "$tmp"/"$KPKG"_*.deb "$KROOT.new"
	depmod -b "$KROOT.new" "$KVER"	# the .deb ships no modules.dep
	rm -rf "$tmp" "$KROOT"
	mv "$KROOT.new" "$KROOT"
fi

# ------------------------------------------------- sshd, NFS's programs
# Debian packages for the guest whose installing would start services on
# this machine: Debian's OpenSSH server (rdmactl's ssh path starts agents
# through it) and the NFS server's and client's programs (rdmatb-nfs). Each
# is downloaded and unpacked under the cache, never installed here; its
# libraries are this machine's (make deps). Without apt (offline) the image
# has no sshd (no ssh path) and no NFS.
unpacked() {	# package, a file it holds: the unpacked tree's root, or nothing
	local pkg=$1 file=$2 root tmp deb ver
	root=$(ls -d "$CACHE/$pkg"-[0-9]* 2>/dev/null | head -1 || true)
	if [ -n "$root" ] && [ -e "$root$file" ]; then echo "$root"; return; fi
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	chown _apt "$tmp" 2>/dev/null || true
	if (cd "$tmp" && apt-get download -q "$pkg" >&2); then
		deb=$(ls "$tmp"/"$pkg"_*.deb)
		ver=$(dpkg-deb -f "$deb" Version | tr ':~' '__')
		rm -rf "$CACHE/$pkg-$ver"
		dpkg-deb -x "$deb" "$CACHE/$pkg-$ver"
		[ -e "$CACHE/$pkg-$ver$file" ] && echo "$CACHE/$pkg-$ver"
	else
		log "apt-get download $pkg failed: the image has no $file"
	fi
	rm -rf "$tmp"
}
SSHD_ROOT=$(unpacked openssh-server /usr/sbin/sshd)
NFSD_ROOT=$(unpacked nfs-kernel-server /usr/sbin/rpc.nfsd)
NFSC_ROOT=$(unpacked nfs-common /sbin/mount.nfs)
# Slurm (rdmatb-slurm, rdmactl run --slurm): the controller, the node
# daemon and its step daemon, the client, the plugins and libslurmfull;
# the four downloaded at once when none is in the cache (one apt-get: a
# few seconds less than four)
SLURM_ROOTS=
if ! ls -d "$CACHE"/slurmd-[0-9]* "$CACHE"/slurmctld-[0-9]* "$CACHE"/slurm-client-[0-9]* \
	"$CACHE"/slurm-wlm-basic-plugins-[0-9]* > /dev/null 2>&1; then
	tmp=$(mktemp -d "$CACHE/dl.XXXXXX")
	chown _apt "$tmp" 2>/dev/null || true
	if (cd "$tmp" && apt-get download -q slurmd slurmctld slurm-client slurm-wlm-basic-plugins >&2); then
		for deb in "$tmp"/*.deb; do
			pkg=$(dpkg-deb -f "$deb" Package)
			ver=$(dpkg-deb -f "$deb" Version | tr ':~' '__')
			rm -rf "$CACHE/$pkg-$ver"
			dpkg-deb -x "$deb" "$CACHE/$pkg-$ver"
		done
	fi
	rm -rf "$tmp"
fi
for pf in slurmctld:/usr/sbin/slurmctld-wlm slurmd:/usr/sbin/slurmd-wlm \
	  slurm-client:/usr/bin/srun slurm-wlm-basic-plugins:/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so; do
	r=$(unpacked "${pf%%:*}" "${pf#*:}")
	[ -n "$r" ] || { SLURM_ROOTS=; log "no Slurm in the image (${pf%%:*})"; break; }
	SLURM_ROOTS="$SLURM_ROOTS $r"
done

# ---------------------------------------------------------------- base layer
versions=$(dpkg-query -W -f='${Package}=${Version}\n' $PKGS 2>/dev/null | sort)
KEY=$( { cat "$0"; echo "$KVER"; echo "$versions"; echo "${SSHD_ROOT##*/} ${NFSD_ROOT##*/} ${NFSC_ROOT##*/} $SLURM_ROOTS"; } | sha256sum | cut -c1-16)
BASE=$CACHE/base-$KVER-$KEY.cpio
BUILT=0
t0=$(date +%s.%N)

copy_file() {	# copy a host file to the same path under $ST (dereferencing links)
	local f=$1
	mkdir -p "$ST$(dirname "$f")"
	[ -e "$ST$f" ] || cp -L "$f" "$ST$f"
}
copy_with_libs() {
	local f=$1 lib
	copy_file "$f"
	for lib in $(ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
		copy_file "$lib"
	done
}
pack() {	# dir out
	(cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) > "$2.tmp"
	mv -f "$2.tmp" "$2"
}

if [ ! -s "$BASE" ]; then
	log "building base layer $BASE"
	BUILT=1
	ST=$(mktemp -d "$CACHE/base.XXXXXX")
	trap 'rm -rf "$ST"' EXIT
	mkdir -p "$ST"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,run,tmp,var,root,mnt}
	cp /bin/busybox "$ST/bin/busybox"
	ln -s busybox "$ST/bin/sh"
	for b in $BINS; do
		p=$(command -v "$b") || p=/usr/sbin/$b
		[ -x "$p" ] || die "missing host binary $b (make deps)"
		copy_with_libs "$p"
	done
	copy_file /lib64/ld-linux-x86-64.so.2
	# libibverbs dlopen()s its provider: ldd cannot see it
	prov=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
	[ -n "$prov" ] || die "no rxe provider (ibverbs-providers)"
	copy_with_libs "$prov"
	mkdir -p "$ST/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$ST/etc/libibverbs.d/"
	# glibc dlopen()s libgcc_s for pthread_exit and cancellation (rping's
	# threads end that way: "libgcc_s.so.1 must be installed", SIGABRT)
	copy_file "$(ls /lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 2>/dev/null | head -1)"
	# UCX dlopen()s its transports (uct_ib, uct_rdmacm, uct_cma) the same way
	for lib in /usr/lib/x86_64-linux-gnu/ucx/*.so.0; do
		[ -e "$lib" ] && copy_with_libs "$lib"
	done
	# Open MPI: mpirun (orterun) starts orted on the other nodes over ssh;
	# both dlopen() their components (ORTE's, OPAL's, OMPI's, PMIx's), and
	# read their help texts and defaults from /usr/share and /etc
	ln -s orterun "$ST/usr/bin/mpirun"
	for lib in /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so \
		   /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so; do
		[ -e "$lib" ] && copy_with_libs "$lib"
	done
	for d in /usr/share/openmpi /usr/share/pmix /etc/openmpi /usr/lib/x86_64-linux-gnu/pmix2/share; do
		[ -d "$d" ] && { mkdir -p "$ST$d"; cp -rL "$d"/. "$ST$d/"; }
	done
	[ -d /etc/iproute2 ] && cp -r /etc/iproute2 "$ST/etc/"
	for d in /usr/lib/x86_64-linux-gnu/tc /usr/lib/tc; do
		[ -d "$d" ] && { mkdir -p "$ST$d"; cp -r "$d"/. "$ST$d/"; }
	done
	if [ -n "$SSHD_ROOT" ]; then	# its privilege separation user: sshd
		mkdir -p "$ST/usr/sbin"
		cp "$SSHD_ROOT/usr/sbin/sshd" "$ST/usr/sbin/sshd"
		for lib in $(ldd "$SSHD_ROOT/usr/sbin/sshd" | awk '/=> \//{print $3}'); do
			copy_file "$lib"
		done
		ldd "$SSHD_ROOT/usr/sbin/sshd" | grep -q "not found" &&
			die "sshd: $(ldd "$SSHD_ROOT/usr/sbin/sshd" | grep "not found" | head -1) (make deps)"
	fi
	# NFS: the server's rpc.nfsd, rpc.mountd and exportfs, the client's
	# mount.nfs (rdmatb-nfs); with the modules below (/etc/rdmatb/nfs.order)
	if [ -n "$NFSD_ROOT" ] && [ -n "$NFSC_ROOT" ]; then
		for f in "$NFSD_ROOT"/usr/sbin/rpc.nfsd "$NFSD_ROOT"/usr/sbin/rpc.mountd \
			 "$NFSD_ROOT"/usr/sbin/exportfs "$NFSC_ROOT"/sbin/mount.nfs; do
			mkdir -p "$ST/usr/sbin"
			cp "$f" "$ST/usr/sbin/"
			ldd "$f" | grep -q "not found" &&
				die "${f##*/}: $(ldd "$f" | grep "not found" | head -1) (make deps)"
			for lib in $(ldd "$f" | awk '/=> \//{print $3}'); do copy_file "$lib"; done
		done
		# libtirpc's transports, the "nfs" service's port
		for f in /etc/netconfig /etc/services /etc/protocols; do
			[ -e "$f" ] || die "$f: missing (make deps: libtirpc-common, netbase)"
			copy_file "$f"
		done
	fi
	# Slurm: its daemons under their own names (Debian's alternatives
	# link slurmd to slurmd-wlm; slurmd runs /usr/sbin/slurmstepd), the
	# client, and the plugins whose libraries this machine has (make deps;
	# the Lua ones are left out)
	if [ -n "$SLURM_ROOTS" ]; then
		SLIB=/usr/lib/x86_64-linux-gnu/slurm-wlm
		mkdir -p "$ST$SLIB" "$ST/usr/sbin" "$ST/usr/bin"
		for r in $SLURM_ROOTS; do
			for f in "$r"/usr/sbin/*-wlm; do
				[ -e "$f" ] && cp "$f" "$ST/usr/sbin/$(basename "${f%-wlm}")"
			done
			for b in srun sbatch salloc squeue sinfo scontrol scancel; do
				[ -e "$r/usr/bin/$b" ] && cp "$r/usr/bin/$b" "$ST/usr/bin/"
			done
			[ -d "$r$SLIB" ] && cp -a "$r$SLIB"/. "$ST$SLIB/"
		done
		# one ldd over them all ("FILE:" then its libraries): a file with
		# a library missing is named before them
		libs=$(LD_LIBRARY_PATH=$ST$SLIB ldd "$ST$SLIB"/*.so "$ST"/usr/sbin/slurm* \
			"$ST"/usr/bin/s{run,batch,alloc,queue,info,control,cancel} 2>&1 || true)
		for f in $(awk '/^[^\t]/{f = $1; sub(":$", "", f)} /not found/{print f}' <<< "$libs" | sort -u); do
			case $f in
			*.so) rm -f "$f" ;;
			*) die "${f##*/}: a library not found: $(grep -m 1 "not found" <<< "$libs") (make deps)" ;;
			esac
		done
		for lib in $(awk '/=> \//{print $3}' <<< "$libs" | sort -u); do
			case $lib in "$ST"*) ;; *) copy_file "$lib" ;; esac
		done
	fi
	printf 'root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/bin/false\n' > "$ST/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$ST/etc/group"
	printf '127.0.0.1 localhost\n' > "$ST/etc/hosts"
	printf 'hosts: files\n' > "$ST/etc/nsswitch.conf"

	# modules + their dependencies, in load order
	declare -A SEEN=()
	ORDER=()
	dep_line() {
		local n=$1
		# none (built in, as virtio_pci is in 6.12): empty, not a failure
		grep -E "(^|/)(${n}|${n//_/-})\.ko(\.[a-z]+)?:" "$MODDIR/modules.dep" | head -1 || true
	}
	add_mod() {
		local n=$1 line path deps d
		line=$(dep_line "$n")
		if [ -z "$line" ]; then
			grep -qE "/(${n}|${n//_/-})\.ko" "$MODDIR/modules.builtin" && return 0
			die "kernel $KVER: module $n neither modular nor built-in"
		fi
		path=${line%%:*}
		deps=${line#*:}
		[ -n "${SEEN[$path]:-}" ] && return 0
		SEEN[$path]=1
		for d in $deps; do add_mod "$(basename "${d%%.ko*}")"; done
		ORDER+=("$path")
	}
	copy_mods() {	# ORDER's modules into the image, their load order on stdout
		local p
		for p in "${ORDER[@]}"; do
			mkdir -p "$ST/lib/modules/$KVER/$(dirname "$p")"
			case $p in
			*.ko.xz) xz -dc "$MODDIR/$p" > "$ST/lib/modules/$KVER/${p%.xz}" ;;
			*.ko.zst) zstd -qdc "$MODDIR/$p" > "$ST/lib/modules/$KVER/${p%.zst}" ;;
			*.ko.gz) gzip -dc "$MODDIR/$p" > "$ST/lib/modules/$KVER/${p%.gz}" ;;
			*) cp "$MODDIR/$p" "$ST/lib/modules/$KVER/$p" ;;
			esac
			echo "${p%.ko*}.ko"
		done
	}
	for m in $MODULES; do add_mod "$m"; done
	mkdir -p "$ST/etc/rdmatb"
	copy_mods > "$ST/etc/rdmatb/modules.order"
	ORDER=()	# the boot's modules stay SEEN: only what they lack
	for m in $STORAGE_MODULES; do add_mod "$m"; done
	copy_mods > "$ST/etc/rdmatb/storage.order"
	if [ -n "$NFSD_ROOT" ] && [ -n "$NFSC_ROOT" ]; then
		ORDER=()
		for m in $NFS_MODULES; do add_mod "$m"; done
		copy_mods > "$ST/etc/rdmatb/nfs.order"
	fi
	cp "$MODDIR"/modules.builtin* "$MODDIR"/modules.order "$ST/lib/modules/$KVER/"
	depmod -b "$ST" "$KVER"
	echo "$KVER" > "$ST/etc/rdmatb/kver"
	pack "$ST" "$BASE"
	# its files, for the overlay: a library the base has is not copied again
	(cd "$ST" && find . ! -type d) | sed 's|^\.||' | LC_ALL=C sort > "$BASE.list"
	rm -rf "$ST"
	trap - EXIT
	# keep the cache small: this kernel's older base layers are useless now
	# (another kernel's stay: per-node testbeds may boot several)
	for f in "$CACHE"/base-"$KVER"-*.cpio "$CACHE"/base-????????????????.cpio; do
		[ -e "$f" ] && [ "$f" != "$BASE" ] && rm -f "$f" "$f.list"
	done
fi
t1=$(date +%s.%N)

# ---------------------------------------------------------------- overlay
ST=$(mktemp -d "$(dirname "$OUT")/overlay.XXXXXX")
trap 'rm -rf "$ST"' EXIT
cp -a "$OVL"/. "$ST"/
for f in $(find "$ST" -type f -perm -u+x); do
	file=$(head -c 4 "$f" | od -An -c | tr -d ' ')
	[ "$file" = "177ELF" ] || continue
	for lib in $(ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'); do
		[ -s "$BASE.list" ] && grep -qxF -- "$lib" "$BASE.list" && continue
		copy_file "$lib"
	done
done
pack "$ST" "$OUT.overlay"
cat "$BASE" "$OUT.overlay" > "$OUT.tmp"
rm -f "$OUT.overlay"
mv -f "$OUT.tmp" "$OUT"

echo "KVER=$KVER"
echo "KERNEL=$VMLINUZ"
echo "BASE=$BASE"
echo "BASE_BUILT=$BUILT"
echo "BASE_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
