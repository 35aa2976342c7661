// SPDX-License-Identifier: MIT
/*
 * The VM backend's qemu processes (backend.h): their command line, KVM or
 * TCG (a probe boot, its verdict cached), started daemonized and known by
 * their pid file, stopped until really gone. vm.c builds testbeds of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"
#include "lib/proc.h"

#define KVM_PROBE_S 45

static const char *qemu_bin(void)
{
	const char *q = getenv("RDMATB_QEMU");

	return q && *q ? q : "qemu-system-x86_64";
}

int tb_file_has(const char *path, const char *needle)
{
	char buf[4096];
	size_t keep = strlen(needle), n;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	memset(buf, 0, sizeof(buf));
	/* sliding window so a marker split across reads is still found */
	while (!found && (n = fread(buf + keep, 1, sizeof(buf) - 1 - keep, f)) > 0) {
		buf[keep + n] = 0;
		found = memmem(buf, keep + n, needle, strlen(needle)) != NULL;
		memmove(buf, buf + n, keep);
	}
	fclose(f);
	return found;
}

/* the last lines of path on stderr (no shell: the path may hold any byte) */
void tb_tail_file(const char *path, int lines)
{
	char n[16], *argv[] = { "tail", "-n", n, "--", (char *)path, NULL };
	struct proc_io io = { -1, 2, 2, 0 };
	pid_t pid;
	int st;

	snprintf(n, sizeof(n), "%d", lines);
	if (proc_spawn(argv, &io, &pid) || proc_reap(pid, 10000, &st))
		log_err("cannot show %s", path);
}

/* qemu's arguments up to the NICs; the strings live until the next call */
void qemu_base_args(char **a, int *n, const char *name, const char *kernel, const char *initrd,
		      const char *serial, int mem_mb, int cpus, const char *accel, const char *append)
{
	static char mem[16], ser[PATH_MAX + 8], smp[16];

	snprintf(mem, sizeof(mem), "%d", mem_mb);
	snprintf(smp, sizeof(smp), "%d", cpus);
	snprintf(ser, sizeof(ser), "file:%s", serial);
	a[(*n)++] = (char *)qemu_bin();
	a[(*n)++] = "-name";
	a[(*n)++] = (char *)name;
	a[(*n)++] = "-m";
	a[(*n)++] = mem;
	a[(*n)++] = "-smp";
	a[(*n)++] = smp;
	a[(*n)++] = "-no-reboot";
	a[(*n)++] = "-display";
	a[(*n)++] = "none";
	a[(*n)++] = "-vga";
	a[(*n)++] = "none";
	a[(*n)++] = "-monitor";
	a[(*n)++] = "none";
	a[(*n)++] = "-serial";
	a[(*n)++] = ser;
	a[(*n)++] = "-kernel";
	a[(*n)++] = (char *)kernel;
	a[(*n)++] = "-initrd";
	a[(*n)++] = (char *)initrd;
	a[(*n)++] = "-append";
	a[(*n)++] = (char *)append;
	a[(*n)++] = "-accel";
	if (!strcmp(accel, "kvm")) {
		a[(*n)++] = "kvm";
		a[(*n)++] = "-cpu";
		a[(*n)++] = "host";
	} else {
		a[(*n)++] = "tcg,thread=multi";
		a[(*n)++] = "-cpu";
		a[(*n)++] = "max";
	}
}

/*
 * KVM when it works, TCG otherwise -- decided by booting the image once with
 * KVM and waiting for the guest's /init (some hosts expose /dev/kvm but fail
 * on real guests, e.g. an MSR assertion). The verdict is cached per host
 * kernel, qemu and guest kernel.
 *
 * The probe decides fast either way: qemu exiting (the MSR assertion,
 * "failed to initialize kvm") is a failure at once, with qemu's own words
 * for the log; the probe guest boots without "quiet", so a KVM guest that
 * runs prints its first kernel lines within a second -- no console output
 * after KVM_PROBE_SILENT_S, or none new for KVM_PROBE_STALL_S, is a guest
 * that does not run (a hang that used to cost the whole KVM_PROBE_S).
 */
#define KVM_PROBE_SILENT_S 5
#define KVM_PROBE_STALL_S 10
#define PROBE_APPEND "console=ttyS0 loglevel=7 panic=-1 mitigations=off rdmatb.probe=1"

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

/* the first line of a file, trimmed, into buf ("" when none) */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* boot the image once with KVM: 1 when the guest reached /init; why not in
 * why (qemu's first error line, or what the console showed) */
static int kvm_probe(const char *kernel, const char *initrd, char *why, size_t whylen)
{
	char serial[PATH_MAX], errlog[PATH_MAX], *args[64];
	int n = 0, ok = 0, null = open("/dev/null", O_RDWR | O_CLOEXEC), efd, st = 0;
	struct proc_io io = { null, null, null, 0 };
	double t0, grew;
	off_t size = 0, now;
	pid_t pid;

	log_info("probing KVM: booting the image once with -accel kvm (up to %d s)", KVM_PROBE_S);
	tb_state_path(serial, sizeof(serial), "kvm-probe.log");
	tb_state_path(errlog, sizeof(errlog), "kvm-probe.err");
	unlink(serial);
	efd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (efd >= 0)
		io.err = efd;
	qemu_base_args(args, &n, "rdma-testbed-probe", kernel, initrd, serial, 256, 1, "kvm", PROBE_APPEND);
	args[n++] = "-nic";
	args[n++] = "none";
	args[n] = NULL;
	if (proc_spawn(args, &io, &pid))
		pid = 0;
	if (null >= 0)
		close(null);
	if (efd >= 0)
		close(efd);
	snprintf(why, whylen, "qemu did not start");
	t0 = grew = rtb_now_s();
	while (pid > 0 && rtb_now_s() - t0 < KVM_PROBE_S) {
		if (tb_file_has(serial, "@@PROBE-OK")) {
			ok = 1;
			break;
		}
		if (!proc_reap(pid, 100, &st)) {
			char line[160];

			pid = 0;
			first_line(errlog, line, sizeof(line));
			snprintf(why, whylen, "qemu exited (status %d)%s%s", st, line[0] ? ": " : "",
				 line);
			break;
		}
		now = file_size(serial);
		if (now > size) {
			size = now;
			grew = rtb_now_s();
		}
		if (!size && rtb_now_s() - t0 >= KVM_PROBE_SILENT_S) {
			snprintf(why, whylen, "no console output in %d s", KVM_PROBE_SILENT_S);
			break;
		}
		if (size && rtb_now_s() - grew >= KVM_PROBE_STALL_S) {
			snprintf(why, whylen, "the guest's console stopped for %d s before /init",
				 KVM_PROBE_STALL_S);
			break;
		}
	}
	if (pid > 0 && !ok && rtb_now_s() - t0 >= KVM_PROBE_S)
		snprintf(why, whylen, "the guest did not reach /init in %d s", KVM_PROBE_S);
	if (pid > 0)
		proc_stop(pid, 0);
	log_info("KVM probe: %s in %.1f s", ok ? "the guest reached /init" : why, rtb_now_s() - t0);
	unlink(serial);
	unlink(errlog);
	return ok;
}

/* KVM when a probe boot shows it works here (the verdict cached per host
 * kernel, qemu and guest kernel), TCG otherwise */
void qemu_choose_accel(struct tb_state *s, const char *want, const char *kernel,
			 const char *initrd)
{
	char cache[PATH_MAX], line[256] = "", qver[128] = "", why[128];
	char *vargs[] = { (char *)qemu_bin(), "--version", NULL };
	struct utsname u;
	unsigned long h = 5381;
	const char *p;
	FILE *f;
	int ok = 0;

	if (!strcmp(want, "tcg")) {
		snprintf(s->accel, sizeof(s->accel), "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "asked for (--accel tcg)");
		return;
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		snprintf(s->accel, sizeof(s->accel), "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "/dev/kvm: %s", strerror(errno));
		if (!strcmp(want, "kvm"))
			log_err("--accel kvm: %s; using TCG", s->accel_why);
		return;
	}
	uname(&u);
	proc_run(vargs, qver, sizeof(qver));
	for (p = u.release; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = qver; *p && *p != '\n'; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = s->kver; *p; p++)
		h = h * 33 + (unsigned char)*p;
	snprintf(cache, sizeof(cache), "%s/accel-%08lx", ctl_cache_dir(), h & 0xffffffffUL);
	f = fopen(cache, "re");
	if (f) {
		if (fgets(line, sizeof(line), f) && !strncmp(line, "kvm", 3))
			ok = 1;
		fclose(f);
		snprintf(s->accel, sizeof(s->accel), ok ? "kvm" : "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "%s", ok ? "KVM probe passed (cached)" :
			 "KVM probe failed earlier on this host (cached)");
		return;
	}
	ok = kvm_probe(kernel, initrd, why, sizeof(why));
	snprintf(s->accel, sizeof(s->accel), ok ? "kvm" : "tcg");
	snprintf(s->accel_why, sizeof(s->accel_why), "%s%s", ok ? "KVM probe passed" :
		 "KVM probe failed: ", ok ? "" : why);
	f = fopen(cache, "we");
	if (f) {
		fprintf(f, "%s\n", s->accel);
		fclose(f);
	}
}

/* pid is still a testbed qemu (not a recycled pid) */
/* /proc/PID/WHAT into buf (NUL-terminated): its length, or <= 0 */
static ssize_t proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	if (pid <= 0 || kill(pid, 0))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

int qemu_ours(pid_t pid)
{
	char cmd[512];
	ssize_t n = proc_read(pid, "cmdline", cmd, sizeof(cmd));

	if (n <= 0)
		return 0;
	return strstr(cmd, "qemu") != NULL && memmem(cmd, (size_t)n, "rdma-testbed", 12) != NULL;
}

/* the pid in $STATE/FILE, 0 when none */
pid_t qemu_pid_file(const char *file)
{
	char path[PATH_MAX];
	FILE *f;
	int pid = 0;

	tb_state_path(path, sizeof(path), file);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

/* args (n of them, room for 4 more) run daemonized: its output in
 * $STATE/NAME.log, its pid from $STATE/NAME.pid into *pid; who: for messages */
int qemu_start(char **args, int n, const char *name, pid_t *pid, const char *who)
{
	char pidf[PATH_MAX], qlog[PATH_MAX], file[64];
	struct proc_io io = { -1, -1, -1, 0 };
	int r, i, st = 255;
	pid_t child;

	snprintf(file, sizeof(file), "%s.log", name);
	tb_state_path(qlog, sizeof(qlog), file);
	snprintf(file, sizeof(file), "%s.pid", name);
	tb_state_path(pidf, sizeof(pidf), file);
	args[n++] = "-daemonize";
	args[n++] = "-pidfile";
	args[n++] = pidf;
	args[n] = NULL;
	if (log_verbose > 0) {
		for (i = 0; args[i]; i++)
			fprintf(stderr, "%s ", args[i]);
		fputc('\n', stderr);
	}
	io.out = io.err = open(qlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	r = proc_spawn(args, &io, &child);
	if (io.out >= 0)
		close(io.out);
	if (r || proc_reap(child, -1, &st) || st) {
		log_err("%s: qemu failed to start:", who);
		tb_tail_file(qlog, 10);
		return -EIO;
	}
	*pid = qemu_pid_file(file);
	if (*pid <= 0) {
		log_err("%s: qemu wrote no pid", pidf);
		return -EIO;
	}
	return 0;
}

/* pid still runs: it exists and is not a zombie waiting for its reaper (a
 * qemu that lets go of its guest's memory can take seconds to exit, and
 * its command line may read empty meanwhile) */
static int still_running(pid_t pid)
{
	char st[256];
	const char *p;

	if (proc_read(pid, "stat", st, sizeof(st)) <= 0)
		return 0;
	p = strrchr(st, ')');	/* "pid (comm) S ...": comm may hold anything */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* wait up to ms for pid to be gone: 0, or -ETIMEDOUT */
int qemu_wait_gone(pid_t pid, int ms)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < ms / 20; i++) {
		if (!still_running(pid))
			return 0;
		nanosleep(&ts, NULL);
	}
	return still_running(pid) ? -ETIMEDOUT : 0;
}

/* our qemu stopped: SIGTERM, then SIGKILL; back once the process is gone
 * (its command line goes before its files do: the tap, the pid file) */
int qemu_stop(pid_t pid)
{
	if (!qemu_ours(pid))
		return 0;
	kill(pid, SIGTERM);
	if (!qemu_wait_gone(pid, 10000))
		return 0;
	kill(pid, SIGKILL);
	if (!qemu_wait_gone(pid, 10000))
		return 0;
	log_err("qemu pid %d does not exit", (int)pid);
	return -EBUSY;
}
