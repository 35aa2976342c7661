/* SPDX-License-Identifier: MIT */
/*
 * Third-party tools' own numbers in our reports: an exec role's `parse:`
 * names the tool whose output its stdout is, and its figures become the
 * arm's (report.json, the text table, expectations: fio.read.clat_p99).
 * A parser that meets output it does not understand says which line, and
 * the run fails; it never reports zeros for what it could not read.
 */
#ifndef RTB_CTL_WL_TOOL_H
#define RTB_CTL_WL_TOOL_H

#include <stddef.h>
#include <jansson.h>

enum tool_kind {
	TOOL_NONE,
	TOOL_FIO,	/* fio --output-format=json (fio 3) */
	TOOL_NVMF,	/* rdmatb-nvmf fio: fio's JSON, and on stderr its result line */
	TOOL_NFS,	/* rdmatb-nfs fio: the same, its result line the client's RPC figures */
	TOOL_PERFTEST,	/* perftest's result table (ib_write_bw, ib_send_lat, ...) */
	TOOL_QPERF,	/* qperf's results (rc_lat, rc_bw, tcp_bw, ...) */
	TOOL_FABTESTS,	/* libfabric's fabtests: fi_pingpong's, fi_rdm_*'s table */
	TOOL_UCX,	/* ucx_perftest's Final: line */
	TOOL_MPI,	/* rdmatb-mpi-bench's lines (examples/mpi) */
	TOOL_MAX,
};

/* "fio" -> TOOL_FIO; -ENOENT for no such parser */
int tool_by_name(const char *name);
const char *tool_name(int kind);
/* the names, "fio, nvmf, nfs, perftest, qperf, fabtests, ucx_perftest, mpi_bench" */
const char *tool_names(void);

/* where a command's output is: its stdout's and stderr's files, and how
 * messages call them (the run directory's relative paths) */
struct tool_out {
	const char *path[2];
	const char *name[2];
};

/*
 * The figures of a tool's output: 0 and *out (a new object, { "fio": {...} },
 * nvmf also { "nvme": {...} }, nfs { "nfs": {...} }, perftest { "perftest": {...} }, qperf { "qperf": {...} }, fabtests { "fabtests": {...} }, ucx_perftest { "ucx_perftest": {...} }, mpi_bench { "mpi_bench": {...} }), or -EBADMSG with "FILE:LINE: what" in err,
 * -errno when a file cannot be read.
 */
int tool_parse(int kind, const struct tool_out *o, json_t **out, char *err, size_t errlen);

/*
 * b's figures into a (both tool_parse's objects, or merges of them): the
 * worse of each (the lower rate, the longer latency, the verdict failed
 * over ok over off), counts and errors added; "runs" counts what went in.
 */
void tool_merge(json_t *a, const json_t *b);

#endif
