/*
 * listen_addr.c - owns the syntax of the `listen` setting (see
 * listen_addr.h).
 */
#include "http/listen_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

int loams_listen_addr_parse(const char *text, loams_listen_addr *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon == text) {
        snprintf(why, whylen, "no HOST:PORT");
        return -EINVAL;
    }
    const char *p = colon + 1;
    unsigned long port = 0;
    if (*p == '\0' || strlen(p) > 5) {
        snprintf(why, whylen, "the port '%s' is not a number from 0 to 65535", p);
        return -EINVAL;
    }
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            snprintf(why, whylen, "the port '%s' is not a number from 0 to 65535", colon + 1);
            return -EINVAL;
        }
        port = port * 10 + (unsigned long)(*p - '0');
    }
    if (port > 65535) {
        snprintf(why, whylen, "the port '%s' is not a number from 0 to 65535", colon + 1);
        return -EINVAL;
    }
    char host[64];
    size_t hlen = (size_t)(colon - text);
    if (hlen >= sizeof host) {
        snprintf(why, whylen, "the host is too long");
        return -EINVAL;
    }
    memcpy(host, text, hlen);
    host[hlen] = '\0';
    out->port = (unsigned)port;
    if (host[0] == '[') {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->sa;
        if (hlen < 3 || host[hlen - 1] != ']') {
            snprintf(why, whylen, "the IPv6 address '%s' has no closing ']'", host);
            return -EINVAL;
        }
        host[hlen - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1) {
            snprintf(why, whylen, "'%s' is not an IPv6 address", host + 1);
            return -EINVAL;
        }
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        out->len = sizeof *s6;
        out->ipv6 = 1;
        out->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
        return 0;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)&out->sa;
    if (strcmp(host, "localhost") == 0) {
        snprintf(host, sizeof host, "127.0.0.1");
    }
    if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
        snprintf(why, whylen,
                 "'%s' is not an IPv4 address, an IPv6 address in brackets or localhost "
                 "(names are not resolved)",
                 host);
        return -EINVAL;
    }
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    out->len = sizeof *s4;
    out->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    return 0;
}

void loams_listen_addr_format(const struct sockaddr *sa, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
        port = ntohs(s6->sin6_port);
        snprintf(buf, size, "[%s]:%u", host, port);
        return;
    }
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
    port = ntohs(s4->sin_port);
    snprintf(buf, size, "%s:%u", host, port);
}
