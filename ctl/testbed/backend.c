// SPDX-License-Identifier: MIT
/* The backends' ops tables, looked up by kind (backend.h). */
#include "ctl/testbed/backend.h"

const struct tb_backend_ops *tb_ops(enum tb_backend b)
{
	return b == TB_HOST ? &tb_host_ops : b == TB_AGENTS ? &tb_agents_ops : &tb_vm_ops;
}
