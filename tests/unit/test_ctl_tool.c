// SPDX-License-Identifier: MIT
/*
 * Tools' output as figures (ctl/wl/tool.h), on real fio: Debian's fio runs
 * here on a file with verify, and its JSON must give the figures fio
 * itself printed; output fio did not write (cut short, text only, text
 * after it, a corrupted job) fails with its file and line, never zeros.
 * The worst-of merge of runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "expect.h"
#include "ctl/wl/tool.h"
#include "lib/proc.h"

static char dir[] = "/tmp/rtb-tool.XXXXXX";

static void put(const char *name, const char *text, size_t len)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	fwrite(text, 1, len, f);
	fclose(f);
}

static int parse_as(int kind, const char *name, const char *ename, json_t **out, char *err,
		    size_t len)
{
	char p[256], e[256];
	struct tool_out o = { { p, e }, { name, ename } };

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(e, sizeof(e), "%s/%s", dir, ename);
	return tool_parse(kind, &o, out, err, len);
}

static int parse(const char *name, json_t **out, char *err, size_t len)
{
	return parse_as(TOOL_FIO, name, "none", out, err, len);
}

static char *slurp(const char *name, size_t *len)
{
	char p[256], *b;
	FILE *f;
	long n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	*len = fread(b, 1, (size_t)n, f);
	b[*len] = 0;
	fclose(f);
	return b;
}

/* nvmf: fio's JSON (from real_fio), and rdmatb-nvmf's result line on stderr */
static void nvmf(void)
{
	static const char res[] = "rdmatb-nvmf: connected over rdma\n"
		"rdmatb-nvmf: result {\"transport\": \"rdma\", \"connect_s\": 0.25, "
		"\"state\": \"live\", \"error_recoveries\": 2, \"reconnects\": 1}\n"
		"rdmatb-nvmf: kernel: [1.0] nvme nvme0: Successfully reconnected\n";
	char err[256];
	json_t *fig, *n;
	int r;

	put("nvmf.err", res, sizeof(res) - 1);
	r = parse_as(TOOL_NVMF, "fio.out", "nvmf.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == 0, "%s", err);
	n = json_object_get(fig, "nvme");
	EXPECT(json_integer_value(json_object_get(n, "error_recoveries")) == 2);
	EXPECT(json_object_get(json_object_get(fig, "fio"), "write") != NULL);
	json_decref(fig);
	put("nvmf.err", res, 33);	/* the first line only */
	r = parse_as(TOOL_NVMF, "fio.out", "nvmf.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && !fig && strstr(err, "nvmf.err:1: nvmf: no "), "%s", err);
	put("nvmf.err", "rdmatb-nvmf: result {\"state\": 1}\n", 33);
	r = parse_as(TOOL_NVMF, "fio.out", "nvmf.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && strstr(err, "nvmf.err:1: nvmf: the result"), "%s", err);
}

/* nfs: rdmatb-nfs's result line; two runs merged add their counts and
 * keep the longer mount */
static void nfs(void)
{
	static const char res[] = "rdmatb-nfs: mounted 198.18.0.1:/ over rdma\n"
		"rdmatb-nfs: result {\"transport\": \"rdma\", \"calls\": 300, \"retrans\": 4, "
		"\"timeouts\": 1, \"reconnects\": 1, \"mount_s\": 0.5, \"fio_exit\": 0}\n";
	static const char res2[] = "rdmatb-nfs: result {\"transport\": \"rdma\", \"calls\": 200, "
		"\"retrans\": 0, \"timeouts\": 0, \"reconnects\": 0, \"mount_s\": 1.5}\n";
	char err[256];
	json_t *fig, *fig2, *n;
	int r;

	put("nfs.err", res, sizeof(res) - 1);
	r = parse_as(TOOL_NFS, "fio.out", "nfs.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == 0, "%s", err);
	n = json_object_get(fig, "nfs");
	EXPECT(json_integer_value(json_object_get(n, "retrans")) == 4 &&
	       json_integer_value(json_object_get(n, "mount_ns")) == 500000000 &&
	       json_object_get(json_object_get(fig, "fio"), "write") != NULL && !json_object_get(fig, "nvme"));
	put("nfs.err", res2, sizeof(res2) - 1);
	r = parse_as(TOOL_NFS, "fio.out", "nfs.err", &fig2, err, sizeof(err));
	EXPECT_MSG(r == 0, "%s", err);
	tool_merge(fig, fig2);
	n = json_object_get(fig, "nfs");
	EXPECT(json_integer_value(json_object_get(n, "calls")) == 500 &&
	       json_integer_value(json_object_get(n, "retrans")) == 4 &&
	       json_integer_value(json_object_get(n, "runs")) == 2 &&
	       json_integer_value(json_object_get(n, "mount_ns")) == 1500000000);
	json_decref(fig);
	json_decref(fig2);
	/* an nvmf result is not an nfs one */
	put("nfs.err", "rdmatb-nvmf: result {\"connect_s\": 1, \"error_recoveries\": 0, "
	    "\"reconnects\": 0}\n", 77);
	r = parse_as(TOOL_NFS, "fio.out", "nfs.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && !fig && strstr(err, "nfs.err:1: nfs: no 'rdmatb-nfs: result "),
		   "%s", err);
	put("nfs.err", "rdmatb-nfs: result {\"calls\": 1, \"mount_s\": 1}\n", 46);
	r = parse_as(TOOL_NFS, "fio.out", "nfs.err", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && strstr(err, "nfs.err:1: nfs: the result is not {calls, retrans"),
		   "%s", err);
}

/* fio's own JSON, read by jansson, against our figures */
static void real_fio(void)
{
	char file[256], out[128], err[256];
	char *argv[] = { "fio", "--name=t", file, "--size=2M", "--rw=randwrite", "--bs=4k",
			 "--iodepth=1", "--verify=crc32c", "--verify_state_save=0",
			 "--output-format=json", NULL };
	struct proc_io io = { -1, -1, -1, 0 };
	json_t *fig = NULL, *doc, *w;
	const json_t *job;
	char *buf;
	size_t len = 0;
	pid_t pid;
	int r, st = -1;

	snprintf(file, sizeof(file), "--filename=%s/data", dir);
	snprintf(out, sizeof(out), "%s/fio.out", dir);
	io.out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (io.out >= 0 && write(io.out, "a wrapper line before it\n", 25) == 25 &&
	    !proc_spawn(argv, &io, &pid))
		proc_reap(pid, -1, &st);
	if (io.out >= 0)
		close(io.out);
	r = st;
	EXPECT_MSG(r == 0, "fio did not run (make deps installs it): %d", r);
	if (r)
		return;
	r = parse("fio.out", &fig, err, sizeof(err));
	EXPECT_MSG(r == 0, "%s", err);
	if (r)
		return;
	buf = slurp("fio.out", &len);
	EXPECT(buf != NULL);
	if (!buf)
		return;
	doc = json_loads(strchr(buf, '{'), 0, NULL);
	job = json_array_get(json_object_get(doc, "jobs"), 0);
	w = json_object_get(json_object_get(fig, "fio"), "write");
	EXPECT(w != NULL);
	EXPECT_EQ_U(json_integer_value(json_object_get(w, "ios")), 512);
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(w, "clat"), "count")),
		    json_integer_value(json_object_get(
			    json_object_get(json_object_get(job, "write"), "clat_ns"), "N")));
	EXPECT(json_real_value(json_object_get(w, "iops")) ==
	       json_number_value(json_object_get(json_object_get(job, "write"), "iops")));
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "p99_ns")) ==
	       (json_int_t)json_number_value(json_object_get(
		       json_object_get(json_object_get(json_object_get(job, "write"), "clat_ns"),
				       "percentile"),
		       "99.000000")));
	EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(fig, "fio"), "verify")) ?: "",
		       "ok"));
	/* the verify pass read it all back */
	EXPECT_EQ_U(json_integer_value(json_object_get(
			    json_object_get(json_object_get(fig, "fio"), "read"), "ios")), 512);

	/* cut short: jansson's line, counted from the file's first */
	put("cut.out", buf, len / 2);
	json_decref(fig);
	r = parse("cut.out", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && strstr(err, "cut.out:") && strstr(err, "not JSON"), "%d %s", r, err);
	EXPECT_MSG(atoi(strchr(err, ':') + 1) > 2, "line: %s", err);
	/* a job whose error is set: verify failed */
	{
		char *e = strstr(buf, "\"error\" : 0,");

		if (e) {
			memcpy(e, "\"error\" : 5,", 12);	/* EIO */
			put("bad.out", buf, len);
			r = parse("bad.out", &fig, err, sizeof(err));
			EXPECT(r == 0);
			EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(fig, "fio"),
									 "verify")) ?: "", "failed"));
			EXPECT(json_integer_value(json_object_get(json_object_get(fig, "fio"),
								  "verify_ok")) == 0);
			json_decref(fig);
		} else {
			EXPECT_MSG(0, "fio's JSON has no '\"error\" : 0'");
		}
	}
	nvmf();
	nfs();
	json_decref(doc);
	free(buf);
}

static void not_fio(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "hello\nworld\n", "text.out:3: fio: no JSON" },
		{ "", "text.out:1: fio: no JSON" },
		{ "x\n{\"jobs\": []}\n", "text.out:2: fio: no jobs" },
		{ "{\"jobs\": [{\"error\": 0}]}\n", "text.out:1: fio: a job's read or write" },
		{ "{\"jobs\": [{\"error\": 0, \"read\": {\"iops\": 1, \"bw_bytes\": 1, \"total_ios\": 0, "
		  "\"clat_ns\": {}}, \"write\": {\"iops\": 1, \"bw_bytes\": 1, \"total_ios\": 0, "
		  "\"clat_ns\": {}}}]}\nafter\n", "text.out:2: fio: text after" },
	};
	char err[256];
	json_t *fig;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("text.out", bad[i].text, strlen(bad[i].text));
		err[0] = 0;
		EXPECT_MSG(parse("text.out", &fig, err, sizeof(err)) == -EBADMSG && !fig &&
				   !strncmp(err, bad[i].want, strlen(bad[i].want)),
			   "#%zu: '%s'", i, err);
	}
	{
		struct tool_out o = { { "/nonexistent/x", NULL }, { "x", NULL } };

		EXPECT(tool_parse(TOOL_FIO, &o, &fig, err, sizeof(err)) == -ENOENT);
	}
	EXPECT(tool_by_name("ucx_perftest") == TOOL_UCX && tool_by_name("fabtests") == TOOL_FABTESTS);
	EXPECT(tool_by_name("mpi_bench") == TOOL_MPI);
	EXPECT(tool_by_name("fio") == TOOL_FIO && tool_by_name("nvmf") == TOOL_NVMF &&
	       tool_by_name("nfs") == TOOL_NFS &&
	       tool_by_name("perftest") == TOOL_PERFTEST && tool_by_name("qperf") == TOOL_QPERF && tool_by_name("mpi") == -ENOENT);
}

/* perftest's tables, as its printf formats lay them out (RESULT_FMT*,
 * REPORT_FMT*), with the lines around them a real run prints */
static void perftest(void)
{
	static const char bw[] =
		"************************************\n"
		"* Waiting for client to connect... *\n"
		" local address: LID 0000 QPN 0x0011 PSN 0x7fd2a1 RKey 0x000000 VAddr 0x0000\n"
		"---------------------------------------------------------------------------------------\n"
		" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		"Conflicting CPU frequency values detected: 1003.892000 != 1940.696000. CPU Frequency is not max.\n"
		" 65536      5000             2.00               1.50  \t\t   0.000024\n"
		"---------------------------------------------------------------------------------------\n";
	static const char lat[] =
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
		"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
		" 2       1000          30.51          412.70       35.20              40.11         "
		"   12.03           98.70                   412.70  \n"
		" 4       1000          31.00          500.00       36.00              41.00         "
		"   13.00           99.00                   500.00  \n";
	/* its CPU clock calibration failed (r^2 < 0.9): every time is inf */
	static const char inf[] =
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
		"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
		" 64      300          inf          inf       inf              inf         "
		"   -nan           inf                   inf  \n";
	static const char gb[] =
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
		" 65536      5000             0.04               0.036              0.000069\n";
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "hello\n", "pt.out:1: perftest: no result table" },
		{ "x\n #bytes  #iterations  BW Port1[MB/sec]\n", "pt.out:2: perftest: column 'BW Port1[MB/sec]' unknown" },
		{ " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		  " 65536      5000   2.00\n", "pt.out:2: perftest: a row of 5 numbers expected" },
		{ " #bytes     #iterations    BW peak[MB/sec]\n----\n", "pt.out:1: perftest: a header and no rows" },
	};
	char err[256];
	json_t *fig, *p;

	put("pt.out", bw, sizeof(bw) - 1);
	EXPECT_MSG(parse_as(TOOL_PERFTEST, "pt.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	p = json_object_get(fig, "perftest");
	EXPECT(json_integer_value(json_object_get(p, "bytes")) == 65536);
	EXPECT(json_integer_value(json_object_get(p, "iterations")) == 5000);
	EXPECT(json_real_value(json_object_get(p, "bw_avg_bytes_per_s")) == 1.5 * 1048576);
	EXPECT(json_real_value(json_object_get(p, "msg_rate_per_s")) == 24);
	json_decref(fig);
	put("pt.out", lat, sizeof(lat) - 1);
	EXPECT_MSG(parse_as(TOOL_PERFTEST, "pt.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	p = json_object_get(fig, "perftest");
	EXPECT(json_integer_value(json_object_get(p, "bytes")) == 4);	/* the last row */
	EXPECT(json_array_size(json_object_get(p, "rows")) == 2);
	EXPECT(json_real_value(json_object_get(p, "lat_p99_9_ns")) == 500000);
	EXPECT(json_real_value(json_object_get(p, "lat_typical_ns")) == 36000);
	json_decref(fig);
	put("pt.out", inf, sizeof(inf) - 1);
	EXPECT_MSG(parse_as(TOOL_PERFTEST, "pt.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	p = json_object_get(fig, "perftest");
	EXPECT(json_integer_value(json_object_get(p, "iterations")) == 300);
	EXPECT(!json_object_get(p, "lat_typical_ns") && !json_object_get(p, "lat_stdev_ns"));
	EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(p, "unmeasured"),
							 "lat_typical_ns")), "inf"));
	EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(p, "unmeasured"),
							 "lat_stdev_ns")), "-nan"));
	json_decref(fig);
	put("pt.out", gb, sizeof(gb) - 1);
	EXPECT_MSG(parse_as(TOOL_PERFTEST, "pt.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	p = json_object_get(fig, "perftest");
	EXPECT(json_real_value(json_object_get(p, "bw_avg_bytes_per_s")) == 0.036 * 125000000);
	json_decref(fig);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("pt.out", bad[i].text, strlen(bad[i].text));
		err[0] = 0;
		fig = NULL;
		EXPECT_MSG(parse_as(TOOL_PERFTEST, "pt.out", "x", &fig, err, sizeof(err)) == -EBADMSG &&
				   !fig && !strncmp(err, bad[i].want, strlen(bad[i].want)),
			   "#%zu: '%s'", i, err);
	}
}

/* a server and its client on this host's loopback: the client's stdout in
 * dir/name, its status (-1: it did not run) */
static int loopback(char **srv, char **cli, const char *name)
{
	char out[256];
	struct proc_io io = { -1, -1, -1, 1 };
	pid_t sp, cp;
	int st = -1;

	snprintf(out, sizeof(out), "%s/%s", dir, name);
	io.out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (proc_spawn(srv, &io, &sp)) {
		close(io.out);
		return -1;
	}
	close(io.out);
	usleep(500000);	/* listening */
	io.out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!proc_spawn(cli, &io, &cp) && proc_reap(cp, 30000, &st))
		proc_stop(cp, 1000);
	close(io.out);
	proc_stop(sp, 2000);
	return st;
}

/* real qperf over this host's loopback (TCP and UDP tests), then lines
 * that are not qperf's */
static void qperf(void)
{
	char port[16], err[256];
	char *srv[] = { "qperf", "--listen_port", port, NULL };
	char *cli[] = { "qperf", "127.0.0.1", "-lp", port, "-t", "1", "tcp_lat", "tcp_bw", "-v",
			"udp_lat", NULL };
	json_t *fig, *q;
	int st;

	snprintf(port, sizeof(port), "%d", 19700 + (int)(getpid() % 200));
	st = loopback(srv, cli, "qperf.out");
	EXPECT_MSG(st == 0, "qperf on the loopback: status %d (make deps installs it)", st);
	EXPECT_MSG(parse_as(TOOL_QPERF, "qperf.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	q = json_object_get(fig, "qperf");
	EXPECT(json_real_value(json_object_get(json_object_get(q, "tcp_lat"), "latency_ns")) > 100);
	EXPECT(json_real_value(json_object_get(json_object_get(q, "tcp_bw"), "bw_bytes_per_s")) > 1e6);
	EXPECT(json_real_value(json_object_get(json_object_get(q, "udp_lat"), "time_ns")) == 1e9);
	EXPECT(json_real_value(json_object_get(json_object_get(q, "udp_lat"), "msg_rate_per_s")) > 0);
	json_decref(fig);
	{
		static const struct {
			const char *text, *want;
		} bad[] = {
			{ "", "q.out:1: qperf: no test's results" },
			{ "latency = 3 us\n", "q.out:1: qperf: a line before any test" },
			{ "rc_lat:\n    latency  =  12 parsecs\n", "q.out:2: qperf: not 'key = value" },
			{ "rc_lat:\nfailed to connect\n", "q.out:2: qperf: not 'key = value" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			put("q.out", bad[i].text, strlen(bad[i].text));
			fig = NULL;
			EXPECT_MSG(parse_as(TOOL_QPERF, "q.out", "x", &fig, err, sizeof(err)) ==
						   -EBADMSG && !fig &&
					   !strncmp(err, bad[i].want, strlen(bad[i].want)),
				   "#%zu: '%s'", i, err);
		}
		/* a rate too small for a prefix: qperf spells its unit out (seen
		 * under 1% loss across kernels: "bw = 0 bytes/sec") */
		put("q.out", "rc_bw:\n    bw  =  0 bytes/sec\n", 30);
		EXPECT(parse_as(TOOL_QPERF, "q.out", "x", &fig, err, sizeof(err)) == 0);
		json_decref(fig);
		put("q.out", "rc_bw:\n    bw  =  27.4 MB/sec\n", 30);
		EXPECT(parse_as(TOOL_QPERF, "q.out", "x", &fig, err, sizeof(err)) == 0);
		EXPECT(json_real_value(json_object_get(json_object_get(json_object_get(fig, "qperf"),
								       "rc_bw"), "bw_bytes_per_s")) ==
		       27.4e6);
		json_decref(fig);
	}
}

/* fi_pingpong's table as a real run over the tcp provider printed it */
static void fabtests(void)
{
	static const char real[] =
		"bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"
		"64      50      =50      6.2k        0.41s      0.02    4094.17       0.00\n"
		"256     50      =50      25k         0.38s      0.07    3838.01       0.00\n"
		"1k      50      =50      100k        0.40s      0.25    4028.00       0.00\n";
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[error] util/pingpong.c:408 : failed to connect\n", "f.out:1: fabtests: no result table" },
		{ "bytes   #sent   flux\n", "f.out:1: fabtests: column 'flux' unknown" },
		{ "bytes   #sent   #ack\n64 50 =50x\n", "f.out:2: fabtests: a row of 3 cells" },
	};
	char err[256];
	json_t *fig, *f;

	put("f.out", real, sizeof(real) - 1);
	EXPECT_MSG(parse_as(TOOL_FABTESTS, "f.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	f = json_object_get(fig, "fabtests");
	EXPECT(json_real_value(json_object_get(f, "bytes")) == 1024);
	EXPECT(json_real_value(json_object_get(f, "total_bytes")) == 100 * 1024);
	EXPECT(json_real_value(json_object_get(f, "lat_ns")) == 4028000);
	EXPECT(json_real_value(json_object_get(f, "bw_bytes_per_s")) == 250000);
	EXPECT(json_array_size(json_object_get(f, "rows")) == 3);
	json_decref(fig);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("f.out", bad[i].text, strlen(bad[i].text));
		fig = NULL;
		EXPECT_MSG(parse_as(TOOL_FABTESTS, "f.out", "x", &fig, err, sizeof(err)) == -EBADMSG &&
				   !fig && !strncmp(err, bad[i].want, strlen(bad[i].want)),
			   "#%zu: '%s'", i, err);
	}
}

/* each {text, error} of bad written to file and refused by the kind's
 * parser with an error that starts so, and no figures */
static void refused(int kind, const char *file, const char *const (*bad)[2], size_t n)
{
	char err[256];
	json_t *fig;

	for (size_t i = 0; i < n; i++) {
		put(file, bad[i][0], strlen(bad[i][0]));
		fig = NULL;
		EXPECT_MSG(parse_as(kind, file, "x", &fig, err, sizeof(err)) == -EBADMSG && !fig &&
				   !strncmp(err, bad[i][1], strlen(bad[i][1])),
			   "%s #%zu: '%s'", file, i, err);
	}
}

/* real ucx_perftest over this host's loopback (UCX_TLS=tcp), then Final
 * lines that are not its */
static void ucx(void)
{
	char port[16], err[256];
	char *srv[] = { "ucx_perftest", "-p", port, NULL };
	char *cli[] = { "ucx_perftest", "127.0.0.1", "-p", port, "-t", "tag_lat", "-n", "2000", NULL };
	json_t *fig, *u;
	int st;

	setenv("UCX_TLS", "tcp", 1);
	snprintf(port, sizeof(port), "%d", 13300 + (int)(getpid() % 200));
	st = loopback(srv, cli, "ucx.out");
	unsetenv("UCX_TLS");
	EXPECT_MSG(st == 0, "ucx_perftest on the loopback: status %d (make deps installs it)", st);
	EXPECT_MSG(parse_as(TOOL_UCX, "ucx.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	u = json_object_get(fig, "ucx_perftest");
	EXPECT(json_integer_value(json_object_get(u, "iters")) == 2000);
	EXPECT(!strcmp(json_string_value(json_object_get(u, "time_is")) ?: "", "latency"));
	EXPECT(json_real_value(json_object_get(u, "lat_typical_ns")) > 100);
	EXPECT(json_real_value(json_object_get(u, "msg_rate_per_s")) > 0);
	json_decref(fig);
	{
		static const char *const bad[][2] = {
			{ "[1.2] [n:1:0] ucp_ep.c:1507 UCX ERROR Destination is unreachable\n",
			  "u.out:1: ucx_perftest: no Final: line" },
			{ "|  latency (usec)  |\nFinal:   20 1.0 2.0\n",
			  "u.out:2: ucx_perftest: a Final: line of 8" },
			{ "Final:   20 1 2 3 4 5 6 7\n", "u.out:1: ucx_perftest: no latency or overhead" },
		};

		refused(TOOL_UCX, "u.out", bad, sizeof(bad) / sizeof(bad[0]));
	}
}

/* real rdmatb-mpi-bench under Open MPI's mpirun on this host (3 ranks,
 * shared memory), then lines that are not its */
static void mpi(void)
{
	char out[256], err[256];
	char *argv[] = { "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3", "--mca", "btl",
			 "self,vader", "build/bin/rdmatb-mpi-bench", "-n", "20", "-l", "50", "-b", "65536",
			 NULL };
	struct proc_io io = { -1, -1, -1, 1 };
	json_t *fig, *m;
	pid_t pid;
	int st = -1;

	snprintf(out, sizeof(out), "%s/mpi.out", dir);
	io.out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!proc_spawn(argv, &io, &pid) && proc_reap(pid, 60000, &st))
		proc_stop(pid, 1000);
	close(io.out);
	EXPECT_MSG(st == 0, "rdmatb-mpi-bench under mpirun: status %d (make deps installs Open MPI)", st);
	EXPECT_MSG(parse_as(TOOL_MPI, "mpi.out", "x", &fig, err, sizeof(err)) == 0, "%s", err);
	m = json_object_get(fig, "mpi_bench");
	EXPECT(json_integer_value(json_object_get(m, "ranks")) == 3);
	EXPECT(json_integer_value(json_object_get(m, "allreduce_iters")) == 20);
	EXPECT(json_integer_value(json_object_get(m, "wrong")) == 0);
	EXPECT(json_real_value(json_object_get(m, "allreduce_p50_ns")) > 0 &&
	       json_real_value(json_object_get(m, "allreduce_p99_ns")) >=
		       json_real_value(json_object_get(m, "allreduce_p50_ns")));
	EXPECT(json_real_value(json_object_get(m, "lat_p50_ns")) > 0);
	EXPECT(json_real_value(json_object_get(m, "bw_bytes_per_s")) > 1e6);
	json_decref(fig);
	{
		static const char *const bad[][2] = {
			{ "ORTE was unable to reliably start one or more daemons.\n",
			  "m.out:1: rdmatb-mpi-bench: no allreduce: line" },
			{ "rdmatb-mpi-bench: ranks=3\nallreduce: bytes=8 iters=2 avg_us=1.0\n",
			  "m.out:2: rdmatb-mpi-bench: no number for p50_us" },
			{ "allreduce: bytes=8 iters=2 avg_us=1 p50_us=1 p99_us=x max_us=1 busbw_MBps=1 wrong=0\n",
			  "m.out:1: rdmatb-mpi-bench: no number for p99_us" },
		};

		refused(TOOL_MPI, "m.out", bad, sizeof(bad) / sizeof(bad[0]));
	}
}

static json_t *run(double iops, json_int_t p99, const char *verify, json_int_t n)
{
	return json_pack("{s:{s:{s:f,s:I,s:I,s:{s:I,s:I,s:I}},s:I,s:I,s:s,s:I}}", "fio", "write",
			 "iops", iops, "bw_bytes_per_s", (json_int_t)(iops * 4096), "ios", n, "clat",
			 "count", n, "p99_ns", p99, "max_ns", p99, "jobs", (json_int_t)1, "errors",
			 (json_int_t)!strcmp(verify, "failed"), "verify", verify, "runs",
			 (json_int_t)1);
}

static void merge(void)
{
	json_t *a = json_object(), *r1 = run(100, 5000, "ok", 10), *r2 = run(50, 3000, "failed", 20),
	       *f, *w;

	tool_merge(a, r1);
	tool_merge(a, r2);
	f = json_object_get(a, "fio");
	w = json_object_get(f, "write");
	EXPECT(json_real_value(json_object_get(w, "iops")) == 50);	/* the lower rate */
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "p99_ns")) == 5000);
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "count")) == 30);
	EXPECT(!strcmp(json_string_value(json_object_get(f, "verify")), "failed"));
	EXPECT(json_integer_value(json_object_get(f, "runs")) == 2);
	EXPECT(json_integer_value(json_object_get(f, "errors")) == 1);
	json_decref(a);
	json_decref(r1);
	json_decref(r2);
	/* the other tools: by a key's unit, the worst of each; rows dropped */
	a = json_object();
	r1 = json_pack("{s:{s:f,s:f,s:i,s:[i],s:i}}", "perftest", "bw_avg_bytes_per_s", 5e6,
		       "lat_p99_ns", 100.0, "bytes", 64, "rows", 1, "runs", 1);
	r2 = json_pack("{s:{s:f,s:f,s:i,s:[i],s:i}}", "perftest", "bw_avg_bytes_per_s", 7e6,
		       "lat_p99_ns", 300.0, "bytes", 64, "rows", 2, "runs", 1);
	tool_merge(a, r1);
	tool_merge(a, r2);
	f = json_object_get(a, "perftest");
	EXPECT(json_real_value(json_object_get(f, "bw_avg_bytes_per_s")) == 5e6);
	EXPECT(json_real_value(json_object_get(f, "lat_p99_ns")) == 300);
	EXPECT(json_integer_value(json_object_get(f, "runs")) == 2 && !json_object_get(f, "rows"));
	json_decref(a);
	json_decref(r1);
	json_decref(r2);
}

int main(void)
{
	static const char *const files[] = { "data", "fio.out", "cut.out", "bad.out", "text.out",
					     "nvmf.err", "nfs.err", "pt.out", "qperf.out", "q.out", "f.out", "ucx.out", "u.out", "mpi.out", "m.out", NULL };
	char p[256];

	if (!mkdtemp(dir))
		return 1;
	real_fio();
	not_fio();
	perftest();
	qperf();
	fabtests();
	ucx();
	mpi();
	merge();
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	EXPECT_MSG(rmdir(dir) == 0, "%s: left behind", dir);
	return expect_done("test_ctl_tool");
}
