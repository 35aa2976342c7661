// SPDX-License-Identifier: MIT
/*
 * rdmatb-mpi-bench: an MPI job's collective and point-to-point figures,
 * for Open MPI over UCX on the testbed (Debian ships no MPI benchmark).
 *
 *   mpirun ... rdmatb-mpi-bench [-s ALLREDUCE_BYTES] [-n ITERS]
 *                               [-b BW_BYTES] [-w WINDOW] [-l LAT_ITERS]
 *
 * allreduce: MPI_Allreduce(MPI_SUM) of doubles over every rank, each
 *   iteration's time the slowest rank's; the result is checked element
 *   by element (wrong=N); busbw as nccl-tests defines it, 2(n-1)/n bytes
 *   per time.
 * latency: rank 0 and rank 1 ping-pong 8 bytes; half the round trip.
 * bandwidth: rank 0 sends WINDOW messages of BW_BYTES to rank 1, which
 *   answers with one byte; bytes over time.
 * Rank 0 prints one line per test, "NAME: key=value ...", that rdmactl's
 * parse: mpi_bench reads. Exit 1 when a result was wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* percentile q (0-100) of n sorted values: the nearest rank */
static double pct(const double *v, int n, double q)
{
	int i = (int)(q / 100.0 * n + 0.999999) - 1;

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void summary(const char *name, const double *t, int n, double extra_bytes, long bytes,
		    long wrong, int ranks)
{
	double *s = malloc(sizeof(*s) * (size_t)n), sum = 0;
	int i;

	memcpy(s, t, sizeof(*s) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_dbl);
	for (i = 0; i < n; i++)
		sum += s[i];
	printf("%s: bytes=%ld iters=%d avg_us=%.2f p50_us=%.2f p99_us=%.2f max_us=%.2f", name, bytes, n,
	       sum / n * 1e6, pct(s, n, 50) * 1e6, pct(s, n, 99) * 1e6, s[n - 1] * 1e6);
	if (extra_bytes > 0)
		printf(" busbw_MBps=%.3f", extra_bytes * 2.0 * (ranks - 1) / ranks / pct(s, n, 50) / 1e6);
	if (wrong >= 0)
		printf(" wrong=%ld", wrong);
	printf("\n");
	free(s);
}

/* allreduce: rank r contributes (r + 1) * (i + j % 7) at element j of
 * iteration i, so the sum is n(n+1)/2 * (i + j % 7), exact in doubles;
 * each iteration's time is its slowest rank's. Rank 0's count of wrong
 * elements over every rank */
static long bench_allreduce(long bytes, int iters, int rank, int size)
{
	size_t cnt = (size_t)bytes / sizeof(double);
	double *t = calloc((size_t)iters, sizeof(double)), *tmax = calloc((size_t)iters, sizeof(double));
	double *in = malloc(cnt * sizeof(double)), *out = malloc(cnt * sizeof(double));
	double f = (double)size * (size + 1) / 2;
	long wrong = 0, all = 0;
	int i;

	if (!t || !tmax || !in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (i = -5; i < iters; i++) {
		int it = i < 0 ? 0 : i;
		double t0;

		for (size_t j = 0; j < cnt; j++)
			in[j] = (rank + 1) * (double)(it + (int)(j % 7));
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, out, (int)cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (i < 0)
			continue;
		t[i] = MPI_Wtime() - t0;
		for (size_t j = 0; j < cnt; j++)
			wrong += out[j] != f * (it + (int)(j % 7));
	}
	MPI_Reduce(t, tmax, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank)
		summary("allreduce", tmax, iters, (double)bytes, bytes, all, size);
	free(t);
	free(tmax);
	free(in);
	free(out);
	return all;
}

/* latency: half a round trip of 8 bytes between ranks 0 and 1 */
static void bench_latency(int iters, int rank, int size)
{
	double *lt = calloc((size_t)iters, sizeof(double)), t0;
	char small[8] = { 0 };
	int i;

	if (!lt)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (i = -10; i < iters; i++) {
		t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(small, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(small, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(small, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(small, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
		if (i >= 0)
			lt[i] = (MPI_Wtime() - t0) / 2;
	}
	if (!rank)
		summary("latency", lt, iters, 0, 8, -1, size);
	free(lt);
}

/* bandwidth: rank 0 sends a window of messages to rank 1, one byte back;
 * five windows */
static void bench_bandwidth(long bytes, int window, int rank)
{
	MPI_Request *rq = calloc((size_t)window, sizeof(*rq));
	char *big = malloc((size_t)bytes), small[1] = { 0 };
	double t0;
	int i, k;

	if (!big || !rq)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(big, rank, (size_t)bytes);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (k = 0; k < 5; k++) {
		for (i = 0; i < window && rank < 2; i++)
			if (rank == 0)
				MPI_Isend(big, (int)bytes, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &rq[i]);
			else
				MPI_Irecv(big, (int)bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rq[i]);
		if (rank < 2)
			MPI_Waitall(window, rq, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(small, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else if (rank == 1)
			MPI_Send(small, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	if (!rank) {
		double s = MPI_Wtime() - t0;

		printf("bandwidth: bytes=%ld window=%d iters=5 seconds=%.6f MBps=%.3f\n", bytes, window, s,
		       (double)bytes * window * 5 / s / 1e6);
	}
	free(big);
	free(rq);
}

int main(int argc, char **argv)
{
	long ar_bytes = 65536, bw_bytes = 1 << 20, wrong;
	int iters = 100, window = 16, lat_iters = 1000, rank, size, opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((opt = getopt(argc, argv, "s:n:b:w:l:")) != -1) {
		switch (opt) {
		case 's': ar_bytes = atol(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'b': bw_bytes = atol(optarg); break;
		case 'w': window = atoi(optarg); break;
		case 'l': lat_iters = atoi(optarg); break;
		default:
			if (!rank)
				fprintf(stderr, "usage: rdmatb-mpi-bench [-s BYTES] [-n ITERS] [-b BYTES] "
						"[-w WINDOW] [-l ITERS]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (ar_bytes < 8 || iters < 1 || bw_bytes < 1 || window < 1 || lat_iters < 1) {
		if (!rank)
			fprintf(stderr, "rdmatb-mpi-bench: sizes and counts must be positive (-s at least 8)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (!rank)
		printf("rdmatb-mpi-bench: ranks=%d\n", size);
	wrong = bench_allreduce(ar_bytes, iters, rank, size);
	if (size >= 2) {
		bench_latency(lat_iters, rank, size);
		bench_bandwidth(bw_bytes, window, rank);
	}
	fflush(stdout);
	MPI_Finalize();
	return wrong ? 1 : 0;
}
