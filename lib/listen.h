/* SPDX-License-Identifier: MIT */
/*
 * Whether a TCP socket listens on a port of this host, read from
 * /proc/net/tcp and tcp6 (no connection is made: a server that serves one
 * connection is not used up). libc only: rdma-run links it alone.
 */
#ifndef RTB_LISTEN_H
#define RTB_LISTEN_H

/* 1 when some socket is in LISTEN on port (any address), else 0 */
int rtb_tcp_listening(int port);

#endif
