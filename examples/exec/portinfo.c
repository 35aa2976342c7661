// SPDX-License-Identifier: MIT
/*
 * A user's RDMA program, as small as one gets: open the device named by
 * RDMATB_DEV (or argv[1]) and print its port's state and active MTU. Built
 * on the host, copied to the testbed with `rdmactl testbed cp` and run
 * there with `rdmactl testbed exec` (tests/softroce/10-testbed.sh):
 *
 *   cc -o portinfo examples/exec/portinfo.c -libverbs
 *   rdmactl testbed cp portinfo node1:/root/bin/
 *   rdmactl testbed exec node1 -- /root/bin/portinfo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : getenv("RDMATB_DEV");
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int i, n, rc = 1;

	if (!want) {
		fprintf(stderr, "portinfo: no device (argv[1] or RDMATB_DEV)\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (!list) {
		perror("portinfo: ibv_get_device_list");
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct ibv_context *ctx;

		if (strcmp(ibv_get_device_name(list[i]), want))
			continue;
		ctx = ibv_open_device(list[i]);
		if (ctx && !ibv_query_port(ctx, 1, &pa)) {
			printf("%s port 1 %s mtu %d\n", want, ibv_port_state_str(pa.state),
			       128 << pa.active_mtu);
			rc = pa.state == IBV_PORT_ACTIVE ? 0 : 1;
		} else
			fprintf(stderr, "portinfo: %s: cannot open or query\n", want);
		if (ctx)
			ibv_close_device(ctx);
		break;
	}
	if (i == n)
		fprintf(stderr, "portinfo: no device %s\n", want);
	ibv_free_device_list(list);
	return rc;
}
