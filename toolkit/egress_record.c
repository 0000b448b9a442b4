/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's records.  See egress.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <unistd.h>

#include "egress.h"

void
bx_egress_record (int fd, atomic_int *count, const struct bx_egress_conn *conn)
{
  if (fd < 0 || (!conn->reserved && atomic_fetch_add (count, 1) >= BX_EGRESS_RECORDS_MAX))
    return;
  char address[INET6_ADDRSTRLEN + 16] = "";
  if (conn->reply == BX_SOCKS_SUCCEEDED && conn->address_len > 0)
    {
      char ip[INET6_ADDRSTRLEN] = "";
      const struct sockaddr *sa = (const struct sockaddr *)&conn->address;
      if (sa->sa_family == AF_INET)
        inet_ntop (AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof ip);
      else if (sa->sa_family == AF_INET6)
        inet_ntop (AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof ip);
      if (ip[0] != '\0')
        snprintf (address, sizeof address, ",\"address\":\"%s\"", ip);
    }
  /* The host is a valid host name (letters, digits, '-', '.') or absent: nothing to escape. */
  char line[512];
  int n;
  if (conn->host[0] != '\0')
    n = snprintf (line, sizeof line, "{\"host\":\"%s\",\"port\":%u,\"reply\":%u%s}\n", conn->host,
                  (unsigned)conn->port, (unsigned)conn->reply, address);
  else
    n = snprintf (line, sizeof line, "{\"host\":null,\"port\":%u,\"reply\":%u%s}\n",
                  (unsigned)conn->port, (unsigned)conn->reply, address);
  if (n <= 0 || (size_t)n >= sizeof line)
    return;
  ssize_t w;
  do
    w = write (fd, line, (size_t)n);
  while (w < 0 && errno == EINTR);
}
