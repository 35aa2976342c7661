/* SPDX-License-Identifier: MIT */
/*
 * A small multilayer perceptron and a synthetic task for the `train`
 * workload: in -> h1 (ReLU) -> h2 (ReLU) -> out (softmax, cross-entropy),
 * trained by SGD with momentum. The task: Gaussian classes -- sample i has
 * a label drawn from a hash of i and is that class's fixed random mean plus
 * N(0, I) noise (the best possible accuracy is about 93% with 10 classes in
 * 128 dimensions). The data are deterministic: sample i is the same on
 * every rank and in every run with the same seed. Parameters live in one flat
 * array, so a gradient is one buffer to allreduce.
 */
#ifndef RTB_MLP_H
#define RTB_MLP_H

#include <stddef.h>
#include <stdint.h>

struct mlp {
	int in, h1, h2, out;
	size_t nparams;
	float *w;		/* W1[h1][in] b1[h1] W2[h2][h1] b2[h2] W3[out][h2] b3[out] */
	float *vel;		/* momentum */
	float *act;		/* scratch: one sample's activations and deltas */
};

struct task {
	int in, out;
	uint64_t seed;
	float *mu;		/* class means: mu[out][in] */
};

int mlp_init(struct mlp *m, int in, int h1, int h2, int out, uint64_t seed);
void mlp_free(struct mlp *m);
/* mean cross-entropy over n samples (x: n x in, y: labels); grad[nparams]
 * = its gradient (overwritten) */
double mlp_grad(struct mlp *m, const float *x, const int *y, int n, float *grad);
/* fraction of the n samples classified right, and their mean loss */
double mlp_accuracy(struct mlp *m, const float *x, const int *y, int n, double *loss);
void mlp_sgd(struct mlp *m, const float *grad, float lr, float momentum);

int task_init(struct task *t, int in, int out, uint64_t seed);
void task_free(struct task *t);
/* sample idx: x[in] and its label */
void task_sample(const struct task *t, uint64_t idx, float *x, int *y);

#endif
