// SPDX-License-Identifier: MIT
/*
 * A fault of one node of per-node VMs (testbed.h, tb_node_fault): its qemu
 * killed, stopped or continued, its switch port down or up, or the node
 * booted again from its own image and waited for until its agent answers.
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

/* node i's agent answers hello with its port ACTIVE, within timeout_s */
static int node_ready(const struct tb_state *s, int i, int timeout_s, char *err, size_t errlen)
{
	double t0 = rtb_now_s();
	char e2[256] = "";

	while (rtb_now_s() - t0 < timeout_s && !ctl_interrupted) {
		struct agentc c;
		json_t *res = NULL;

		if (!tb_agent_open(&c, s, i, 1000)) {
			int ok = !agentc_call(&c, "hello", NULL, &res, 3000, e2, sizeof(e2)) &&
				 !strcmp(json_string_value(json_object_get(res, "state")) ?: "", "ACTIVE");

			json_decref(res);
			agentc_close(&c);
			if (ok)
				return 0;
		}
		if (!qemu_ours(s->node[i].qemu_pid)) {
			snprintf(err, errlen, "%s: its qemu exited while booting (see %s)",
				 s->node[i].name, "serial-nodeN.log in the state directory");
			return -ECHILD;
		}
		usleep(250 * 1000);
	}
	snprintf(err, errlen, "%s: its agent not ready after %d s", s->node[i].name, timeout_s);
	return ctl_interrupted ? -EINTR : -ETIMEDOUT;
}

int tb_node_running(const struct tb_state *s, int i)
{
	return s->backend != TB_VM || s->topology != TB_PER_NODE || qemu_ours(s->node[i].qemu_pid);
}

int tb_node_fault(struct tb_state *s, int i, enum tb_node_fault f, int timeout_s, char *err,
		  size_t errlen)
{
	pid_t pid = s->node[i].qemu_pid;
	char initrd[PATH_MAX], cfg[PATH_MAX], kernel[PATH_MAX];
	int r;

	if (s->backend != TB_VM || s->topology != TB_PER_NODE) {
		snprintf(err, errlen, "a node fault needs a kernel a node (testbed up --topology "
			 "per-node); this testbed's nodes share %s",
			 s->backend == TB_VM ? "one VM's kernel" : "this host's kernel");
		return -EOPNOTSUPP;
	}
	switch (f) {
	case TB_CRASH:
	case TB_FREEZE:
	case TB_THAW:
		if (!qemu_ours(pid)) {
			snprintf(err, errlen, "%s: its qemu is not running (crashed?)", s->node[i].name);
			return -ESRCH;
		}
		kill(pid, f == TB_CRASH ? SIGKILL : f == TB_FREEZE ? SIGSTOP : SIGCONT);
		if (f == TB_CRASH && qemu_wait_gone(pid, 10000)) {
			snprintf(err, errlen, "%s: qemu %d does not exit", s->node[i].name, (int)pid);
			return -EBUSY;
		}
		return 0;
	case TB_PORT_DOWN:
	case TB_PORT_UP:
		return tb_switch_port_set(i, f == TB_PORT_UP, err, errlen);
	case TB_REBOOT:
		break;
	case TB_NIC_RESET:	/* the agent's (up.c), on any backend */
		snprintf(err, errlen, "a nic reset is the node agent's");
		return -EINVAL;
	}
	/* reboot: the same kernel and image, the same ports; its agent back */
	vm_node_image(s, i, kernel, sizeof(kernel), initrd, sizeof(initrd));
	if (!kernel[0] || access(kernel, R_OK) || access(initrd, R_OK)) {
		snprintf(err, errlen, "%s: no image to boot again (%s)", s->node[i].name, initrd);
		return -ENOENT;
	}
	if (qemu_ours(pid)) {
		kill(pid, SIGCONT);	/* a frozen one dies too */
		if (qemu_stop(pid)) {
			snprintf(err, errlen, "%s: qemu %d does not exit", s->node[i].name, (int)pid);
			return -EBUSY;
		}
	}
	tb_state_path(cfg, sizeof(cfg), "ssh/config");
	r = vm_boot_node(s, i, access(cfg, R_OK) ? 1 : 0, kernel, initrd);
	if (r) {
		snprintf(err, errlen, "%s: qemu did not start again", s->node[i].name);
		return r;
	}
	/* its tap is a new device: the XDP switch takes it in, in its old place */
	if (s->switch_xdp && tb_switch_xdp_port(i)) {
		snprintf(err, errlen, "%s: the XDP switch did not take its new port in",
			 s->node[i].name);
		return -EIO;
	}
	return node_ready(s, i, timeout_s, err, errlen);
}
