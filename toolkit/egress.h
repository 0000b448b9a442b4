/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy: the part of SOCKS5 (RFC 1928) that `curl --proxy socks5h://` speaks,
 * over a Unix socket.  It lets a connection through only to a granted name, on a granted port
 * (443 unless the pattern names others), at a public address, and then copies bytes both ways
 * without looking at them (TLS runs end to end between curl and the server).  handshake() in
 * egress.c takes it step by step, each exit marked. */
#ifndef BX_TOOLKIT_EGRESS_H
#define BX_TOOLKIT_EGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bx/contract.h"
#include "bx/error.h"
#include "dial.h"

#define BX_EGRESS_HANDSHAKE_MS    10000
#define BX_EGRESS_CONNECT_MS      10000
#define BX_EGRESS_MAX_CONNECTIONS 8

/* The SOCKS5 reply codes the proxy sends, one per reason, so that http_fetch can tell the
 * model which it was (curl passes the code on in its message). */
#define BX_SOCKS_SUCCEEDED                  0
#define BX_SOCKS_GENERAL_FAILURE            1 /* the call's connection records are spent */
#define BX_SOCKS_NOT_ALLOWED                2 /* the name or the port is not granted */
#define BX_SOCKS_NETWORK_UNREACHABLE        3 /* the name has no address the proxy may reach */
#define BX_SOCKS_HOST_UNREACHABLE           4 /* the name did not resolve, or to nothing */
#define BX_SOCKS_CONNECTION_REFUSED         5 /* connecting failed */
#define BX_SOCKS_TTL_EXPIRED                6 /* connecting took longer than its timeout */
#define BX_SOCKS_COMMAND_NOT_SUPPORTED      7
#define BX_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED 8

/* The --allow list: one or more host patterns separated by ','.  Every piece must pass
 * bx_valid_host_port_pattern ("example.com", "example.com:8443", "*.example.com:*"); an
 * empty piece ("", ",", "a.com,") is an error. */
struct bx_allow;
int bx_allow_parse (const char *list, struct bx_allow **out, bx_error *err);
/* HOST is a valid host and some pattern allows it (without regard to case) on PORT. */
bool bx_allow_permits (const struct bx_allow *allow, const char *host, unsigned port);
void bx_allow_free (struct bx_allow *allow);
/* The --allow-private list: address ranges (bx_cidr_parse) separated by ',', which the proxy
 * may reach besides public addresses.  Adds them to ALLOW; an empty piece or a range
 * bx_cidr_parse refuses is an error. */
int bx_allow_parse_private (struct bx_allow *allow, const char *list, bx_error *err);
/* ADDR is public, or lies in one of the private ranges. */
bool bx_allow_address (const struct bx_allow *allow, const struct sockaddr *addr);

/* How the copy after the handshake moves bytes (egress_copy.c). */
enum bx_egress_copy
{
  BX_EGRESS_COPY_SPLICE,      /* a thread per direction, splice(2) through a pipe */
  BX_EGRESS_COPY_BUFFER,      /* a thread per direction, a 64 KiB buffer */
  BX_EGRESS_COPY_POLL_SPLICE, /* one thread, poll(2), splice through a pipe per direction */
  BX_EGRESS_COPY_POLL_BUFFER, /* one thread, poll(2), a 64 KiB buffer per direction */
};

struct bx_egress_config
{
  int handshake_ms; /* the whole handshake's deadline: BX_EGRESS_HANDSHAKE_MS */
  int connect_ms;   /* the connect timeout: BX_EGRESS_CONNECT_MS */
  enum bx_egress_copy copy;
  int records_fd; /* where each connection's record goes (egress_record.c); -1: nowhere */
};

/* What one connection asked for and got, for its record. */
struct bx_egress_conn
{
  bool replied;  /* a reply was sent: the connection is recorded */
  bool reserved; /* its record was counted before it was connected */
  uint8_t reply; /* the SOCKS5 reply code: BX_SOCKS_SUCCEEDED or a refusal */
  uint16_t port;
  char host[256];                  /* the name asked for when it is a valid host name, else "" */
  struct sockaddr_storage address; /* connected to, when reply is BX_SOCKS_SUCCEEDED */
  socklen_t address_len;
};

/* Records are JSON lines in the egress folder, next to the socket, for the runtime to read
 * after the call and pass to brokerd's audit log:
 *
 *   {"host":"example.com","port":443,"reply":0,"address":"93.184.215.14"}
 *   {"host":"other.org","port":443,"reply":2}
 *   {"host":null,"port":0,"reply":8}
 *
 * At most BX_EGRESS_RECORDS_MAX per proxy (a fetch redirected in a loop must not fill the
 * disk); each is one write(2) to a file opened with O_APPEND.  A connection the proxy is to
 * make takes its record first, and with none left it is refused (BX_SOCKS_GENERAL_FAILURE, not
 * recorded): a tool cannot spend the records on refusals and then connect unrecorded. */
/* BX_EGRESS_RECORDS_FILE and BX_EGRESS_RECORDS_MAX: bx/contract.h (the runtimes read it). */
void bx_egress_record (int fd, atomic_int *count, const struct bx_egress_conn *conn);

/* The production settings. */
struct bx_egress_config bx_egress_default_config (void);

struct bx_egress;
/* Takes ALLOW.  DIAL (and its context) must outlive the proxy and any resolution it
 * started. */
struct bx_egress *bx_egress_new (struct bx_allow *allow, const struct bx_dial *dial,
                                 const struct bx_egress_config *config);
/* Only for a proxy whose bx_egress_serve never ran (its handler threads stay) and with no
 * bx_egress_handle running. */
void bx_egress_free (struct bx_egress *proxy);

/* One connection, from the greeting to the end of the copy; closes CLIENT. */
void bx_egress_handle (struct bx_egress *proxy, int client);

/* Copies both ways between CLIENT and SERVER until both directions have ended, passing each
 * end on as a half-close; closes neither. */
void bx_egress_copy (int client, int server, enum bx_egress_copy mode);

/* Accepts on LISTENER for ever, on the calling thread and on threads it starts, each
 * connection handled by the thread that accepted it: at most BX_EGRESS_MAX_CONNECTIONS at
 * once, more closed at once.  The threads are kept for the next connections: the proxy must
 * not be freed.
 * Returns -1 with *err on an accept error.  The process must ignore SIGPIPE. */
int bx_egress_serve (struct bx_egress *proxy, int listener, bx_error *err);

/* How many connections are being handled right now. */
int bx_egress_active (struct bx_egress *proxy);

/* A listening Unix socket at PATH; an existing file there is an error (never removed).
 * The message is "cannot listen on PATH: <reason>". */
int bx_egress_listen (const char *path, bx_error *err);

#endif
