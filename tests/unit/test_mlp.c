// SPDX-License-Identifier: MIT
/*
 * The train workload's model: the backward pass agrees with finite
 * differences, the synthetic task's labels are spread over the classes, and
 * plain SGD on 3 x 8 samples a step learns the task (what `train` does over
 * three agents, without the network).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/mlp.h"
#ifndef LR
#define LR 0.02f
#endif

int main(int argc, char **argv)
{
	struct mlp m;
	struct task t;
	enum { IN = 16, EV = 512 };
	float x[4 * IN], *g, *xe, *xb;
	int y[4], ye[EV], yb[64], counts[10] = { 0 }, i, k, step;
	double acc0, acc, loss;
	int steps = argc > 1 ? atoi(argv[1]) : 300;

	/* gradient check on a small net */
	EXPECT(!mlp_init(&m, IN, 12, 10, 5, 3));
	EXPECT(!task_init(&t, IN, 5, 9));
	for (i = 0; i < 4; i++)
		task_sample(&t, (uint64_t)i, x + i * IN, &y[i]);
	g = malloc(m.nparams * sizeof(float));
	mlp_grad(&m, x, y, 4, g);
	{
		int bad = 0, checked = 0;

		for (size_t p = 0; p < m.nparams; p += 7) {
			float keep = m.w[p];
			double lp, lm, num, *dummy = NULL;
			float *tmp = malloc(m.nparams * sizeof(float));

			(void)dummy;
			m.w[p] = keep + 1e-2f;
			lp = mlp_grad(&m, x, y, 4, tmp);
			m.w[p] = keep - 1e-2f;
			lm = mlp_grad(&m, x, y, 4, tmp);
			m.w[p] = keep;
			free(tmp);
			num = (lp - lm) / 2e-2;
			checked++;
			if (fabs(num - g[p]) > 2e-3 + 0.05 * fabs(num))
				bad++;
		}
		fprintf(stderr, "gradient check: %d of %d parameters off\n", bad, checked);
		EXPECT(bad <= checked / 50);	/* ReLU kinks may catch a few */
	}
	free(g);
	mlp_free(&m);
	task_free(&t);

	/* the real sizes: at least 200k parameters, labels over every class */
	EXPECT(!mlp_init(&m, 128, 512, 264, 10, 1));
	EXPECT(m.nparams >= 200000);
	EXPECT(!task_init(&t, 128, 10, 1));
	xe = malloc((size_t)EV * 128 * sizeof(float));
	xb = malloc(64 * 128 * sizeof(float));
	g = malloc(m.nparams * sizeof(float));
	for (i = 0; i < EV; i++) {
		task_sample(&t, (1ULL << 40) + (uint64_t)i, xe + (size_t)i * 128, &ye[i]);
		counts[ye[i]]++;
	}
	for (k = 0; k < 10; k++)
		EXPECT(counts[k] > EV / 40);
	acc0 = mlp_accuracy(&m, xe, ye, EV, &loss);
	for (step = 0; step < steps; step++) {
		for (i = 0; i < 24; i++)
			task_sample(&t, (uint64_t)step * 24 + (uint64_t)i, xb + (size_t)i * 128, &yb[i]);
		mlp_grad(&m, xb, yb, 24, g);
		mlp_sgd(&m, g, LR, 0.9f);
		if (argc > 1 && step % 25 == 24) {
			acc = mlp_accuracy(&m, xe, ye, EV, &loss);
			fprintf(stderr, "step %d: accuracy %.3f loss %.3f\n", step + 1, acc, loss);
		}
	}
	acc = mlp_accuracy(&m, xe, ye, EV, &loss);
	fprintf(stderr, "accuracy %.3f -> %.3f after %d steps (loss %.3f)\n", acc0, acc, steps, loss);
	EXPECT(acc > acc0 + 0.3);
	free(xe);
	free(xb);
	free(g);
	mlp_free(&m);
	task_free(&t);
	return expect_done("test_mlp");
}
