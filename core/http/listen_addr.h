/*
 * listen_addr.h - the address the HTTP API listens on: the text of the
 * `listen` setting (HOST:PORT) turned into a socket address, and whether
 * only this machine can reach it.
 *
 * HOST is an IPv4 address (127.0.0.1, 0.0.0.0 = every IPv4 interface), an
 * IPv6 address in brackets ([::1], [::] = every interface, IPv4 too), or
 * `localhost` (127.0.0.1).  Names are not resolved: the address a daemon
 * opens to the network is written out.  PORT is 0 to 65535; 0 lets the
 * kernel pick a free port (the server logs the one it got).
 *
 * Loopback: 127.0.0.0/8, ::1 and localhost.  Everything else is reachable
 * from other machines, which the server allows only with auth on
 * (server.h).
 *
 * Threads: reentrant; nothing allocates.
 */
#ifndef LOAMS_HTTP_LISTEN_ADDR_H
#define LOAMS_HTTP_LISTEN_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

typedef struct loams_listen_addr {
    struct sockaddr_storage sa; /* sockaddr_in or sockaddr_in6 */
    socklen_t len;
    int ipv6;     /* 1: sa is a sockaddr_in6 */
    int loopback; /* 1: only this machine can connect */
    unsigned port;
} loams_listen_addr;

/* Parses `text` into *out.  Errors: -EINVAL with why[0..whylen) saying
 * what is wrong ("the port '70x' is not a number from 0 to 65535", ...). */
int loams_listen_addr_parse(const char *text, loams_listen_addr *out, char *why, size_t whylen);

/* Writes "HOST:PORT" of a bound address (IPv6 in brackets) into buf. */
void loams_listen_addr_format(const struct sockaddr *sa, char *buf, size_t size);

#endif
