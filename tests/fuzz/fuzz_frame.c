// SPDX-License-Identifier: MIT
/* libFuzzer: the control channel's frame decoder (lib/proto.c), as the
 * agent reads a stranger's handshake frame and then a session's tagged
 * frames (with a fixed key: the tag fails, the decoder before it runs) */
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include "lib/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	json_t *j = NULL;

	if (size > 60000 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	if (write(sv[0], data, size) == (ssize_t)size) {
		shutdown(sv[0], SHUT_WR);
		if (!proto_recv_max(sv[1], &j, 100, 64u << 10)) {
			json_decref(j);
			j = NULL;
			struct proto_sess s = { .fd = sv[1], .side = 'a' };

			proto_sess_recv(&s, &j, 100);	/* whatever follows */
			json_decref(j);
		}
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
