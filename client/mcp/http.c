/* SPDX-License-Identifier: Apache-2.0 */
/* The streamable HTTP transport (MCP 2025-03-26 on, "Streamable HTTP"): one endpoint,
 * /mcp.  A POST carries one JSON-RPC message (under 2025-03-26, or a batch answered as one
 * array); a request is answered with one application/json response (or, while a tools/call
 * runs and the client accepts it, an SSE stream of its progress notifications and then its
 * response); a notification or a response with 202 Accepted.  The server opens no stream of
 * its own: GET (and DELETE: there are no sessions) is 405.
 *
 * Once the headers are in, before any body is read: an Origin that is not this host's is 403
 * (a web page must not reach this server through a name it rebinds to it), a missing or wrong
 * bearer token is 401, an MCP-Protocol-Version that is not spoken over HTTP is 400; without one,
 * the request is read as 2025-03-26 (versions.c says why).  Every TCP listener, loopback included,
 * needs a token: without one any local user could call tools as this user.  A Unix socket without a
 * token is made 0600, its owner's alone.
 *
 * Nobody locks the server out before authenticating: a connection that has not yet sent a
 * request through the gate may hold at most UNTRUSTED_MAX of the CONNECTIONS_MAX places (a
 * newer one closes the oldest), and only for HEADERS_MS. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "bx/printable.h"

#include "mcp.h"
#include "mhd.h"

#define TOKEN_MAX       4096
#define CONNECTIONS_MAX 64
#define UNTRUSTED_MAX   16
/* From a connection's accept to the headers of a request that passes the gate.  A client
 * sends its headers at once; a connection that has not, after this long, is closed. */
#define HEADERS_MS 30000
/* A trusted connection's idle time (a tools/call that waits for approval sends nothing). */
#define IDLE_S 600

/* One connection, from MHD's NOTIFY_STARTED to NOTIFY_CLOSED (which MHD calls before it
 * closes the descriptor, so shutting FD down under the lock never reaches another socket). */
struct conn
{
  struct conn *prev, *next;
  int fd;
  int64_t since; /* accepted, monotonic ms */
  bool trusted;  /* a request of it passed the gate (the token, when there is one) */
  bool cut;      /* shut down here: it no longer counts */
  char peer[BX_PEER_MAX + 1];
};

struct http
{
  struct bx_mcp_server *srv;
  const char *address; /* --http's */
  char *token;         /* NULL: none asked (a Unix socket only) */
  const char **origins;
  pthread_mutex_t lock;
  pthread_cond_t wake;      /* the sweeper's: a new untrusted connection, or stop */
  struct conn *head, *tail; /* oldest first */
  unsigned untrusted;       /* neither trusted nor cut */
  bool stopping;
};

/* libmicrohttpd's functions, loaded when the server starts. */
static const struct bx_mhd *mhd;

/* One POST: its body, then what the session sends back through its sink: notifications
 * (progress) and the response, in order.  Shared by the connection, the session (until
 * sink->done) and an SSE response (until MHD frees it): the last one frees it. */
struct post
{
  struct bx_mcp_sink sink;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int refs;
  bool done;
  json_t *msgs; /* array: sent, not yet written */
  char *out;    /* SSE: the event being written, and how much of it is written */
  size_t out_len, out_pos;
  char *body;
  size_t len;
  bool too_large;
};

static void
post_unref (struct post *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock (&p->lock);
  bool last = --p->refs == 0;
  pthread_mutex_unlock (&p->lock);
  if (!last)
    return;
  pthread_mutex_destroy (&p->lock);
  pthread_cond_destroy (&p->cond);
  json_decref (p->msgs);
  free (p->out);
  free (p->body);
  free (p);
}

static void
post_send (struct bx_mcp_sink *sink, json_t *msg)
{
  struct post *p = (struct post *)sink;
  pthread_mutex_lock (&p->lock);
  json_array_append_new (p->msgs, msg);
  pthread_cond_signal (&p->cond);
  pthread_mutex_unlock (&p->lock);
}

static void
post_done (struct bx_mcp_sink *sink)
{
  struct post *p = (struct post *)sink;
  pthread_mutex_lock (&p->lock);
  p->done = true;
  pthread_cond_signal (&p->cond);
  pthread_mutex_unlock (&p->lock);
  post_unref (p);
}

/* The response among what was sent (a notification has a method), or NULL. */
static json_t *
take_response (struct post *p)
{
  size_t i;
  json_t *m;
  json_array_foreach (p->msgs, i,
                      m) if (json_object_get (m, "method") == NULL) return json_incref (m);
  return NULL;
}

/* The SSE stream of one request: each message as an event, then the end once the session is
 * done with it.  MHD calls this on the connection's own thread, so waiting here holds up
 * nobody else. */
static ssize_t
sse_read (void *cls, uint64_t pos, char *buf, size_t max)
{
  struct post *p = cls;
  pthread_mutex_lock (&p->lock);
  while (p->out == NULL)
    {
      if (json_array_size (p->msgs) > 0)
        {
          cleanup_free char *text = json_dumps (json_array_get (p->msgs, 0), JSON_COMPACT);
          json_array_remove (p->msgs, 0);
          if (text != NULL)
            {
              p->out = bx_xasprintf ("event: message\ndata: %s\n\n", text);
              p->out_len = strlen (p->out);
              p->out_pos = 0;
            }
          continue;
        }
      if (p->done)
        {
          pthread_mutex_unlock (&p->lock);
          return MHD_CONTENT_READER_END_OF_STREAM;
        }
      pthread_cond_wait (&p->cond, &p->lock);
    }
  size_t n = p->out_len - p->out_pos < max ? p->out_len - p->out_pos : max;
  memcpy (buf, p->out + p->out_pos, n);
  p->out_pos += n;
  if (p->out_pos == p->out_len)
    {
      free (p->out);
      p->out = NULL;
    }
  pthread_mutex_unlock (&p->lock);
  return (ssize_t)n;
}

static void
sse_free (void *cls)
{
  post_unref (cls);
}

/* AUTHENTICATE: the WWW-Authenticate header of a 401. */
static enum MHD_Result
answer_authenticate (struct MHD_Connection *conn, unsigned status, const char *type,
                     const char *body, const char *authenticate)
{
  struct MHD_Response *r
      = mhd->create_response_from_buffer (strlen (body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  if (type != NULL)
    mhd->add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    mhd->add_response_header (r, MHD_HTTP_HEADER_ALLOW, "POST");
  if (authenticate != NULL)
    mhd->add_response_header (r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, authenticate);
  enum MHD_Result ret = mhd->queue_response (conn, status, r);
  mhd->destroy_response (r);
  return ret;
}

static enum MHD_Result
answer (struct MHD_Connection *conn, unsigned status, const char *type, const char *body)
{
  return answer_authenticate (conn, status, type, body, NULL);
}

/* An error before any JSON-RPC message was read: a JSON-RPC error with no id, since there
 * is no request whose id it could answer. */
static enum MHD_Result
refuse (struct MHD_Connection *conn, unsigned status, const char *why)
{
  json_auto_t *e = bx_mcp_error (NULL, -32000, why);
  cleanup_free char *text = json_dumps (e, JSON_COMPACT);
  return answer (conn, status, "application/json", text ? text : "{}");
}

/* The scheme and authority clients reach this server at, "http://127.0.0.1:8765": the
 * request's Host when it is a plain host[:port], else the listening address.  Only the
 * client that sent the Host is told it back. */
static char *
base_url (const struct http *h, struct MHD_Connection *conn)
{
  const char *host = mhd->lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  bool plain = host != NULL && host[0] != '\0' && strlen (host) <= 255;
  for (const char *c = host; plain && *c != '\0'; c++)
    plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
            || strchr (".-:[]", *c) != NULL;
  if (plain)
    return bx_xasprintf ("http://%s", host);
  return bx_xasprintf ("http://%s", h->address[0] == '/' ? "localhost" : h->address);
}

/* What the token check tells a client, as the MCP authorization spec asks (RFC 9728): where
 * the protected resource metadata is, and that there is no authorization server to ask for a
 * token, so that a client asks its user for the token instead of registering itself. */
#define NO_AUTHORIZATION_SERVER                                                                    \
  "this server takes one static bearer token (boxmaker mcp --token-file); there is no "            \
  "authorization server to get one from"

static enum MHD_Result
unauthorized (const struct http *h, struct MHD_Connection *conn, bool token_sent)
{
  cleanup_free char *base = base_url (h, conn);
  /* RFC 6750: a request that sent no token is told no error, one that sent a wrong one is. */
  cleanup_free char *authenticate
      = token_sent ? bx_xasprintf ("Bearer error=\"invalid_token\", error_description=\"%s\", "
                                   "resource_metadata=\"%s/.well-known/oauth-protected-resource\"",
                                   NO_AUTHORIZATION_SERVER, base)
                   : bx_xasprintf ("Bearer resource_metadata=\"%s/.well-known/"
                                   "oauth-protected-resource\"",
                                   base);
  json_auto_t *e = bx_mcp_error (
      NULL, -32000, "Unauthorized: a valid bearer token is needed; " NO_AUTHORIZATION_SERVER);
  cleanup_free char *text = json_dumps (e, JSON_COMPACT);
  return answer_authenticate (conn, MHD_HTTP_UNAUTHORIZED, "application/json", text ? text : "{}",
                              authenticate);
}

/* A 404 in the shape of an OAuth error (RFC 6749, 5.2), which OAuth clients show to their
 * user: its error_description is what they say. */
static enum MHD_Result
oauth_not_found (struct MHD_Connection *conn, const char *why)
{
  json_auto_t *e = json_pack ("{s:s, s:s}", "error", "invalid_request", "error_description", why);
  cleanup_free char *text = e ? json_dumps (e, JSON_COMPACT) : NULL;
  return answer (conn, MHD_HTTP_NOT_FOUND, "application/json", text ? text : "{}");
}

/* What OAuth clients look for once a 401 sent them off: the documents under /.well-known/,
 * and the endpoints a client assumes when it finds no authorization server metadata
 * (/register, /authorize, /token).  MHD_YES with *served set when URL is one of them.  They
 * hold no secret and are answered without the token. */
static enum MHD_Result
well_known (const struct http *h, struct MHD_Connection *conn, const char *url, const char *method,
            bool *served)
{
  *served = strncmp (url, "/.well-known/", 13) == 0 || strcmp (url, "/register") == 0
            || strcmp (url, "/authorize") == 0 || strcmp (url, "/token") == 0;
  if (!*served)
    return MHD_YES;
  if (h->token == NULL)
    return oauth_not_found (conn, "this server asks for no token");
  /* RFC 9728 puts the metadata of /mcp at .../oauth-protected-resource/mcp, where a client
   * looks first when a 401 names none; the root one is its fallback, and what the 401 names. */
  bool resource = strcmp (url, "/.well-known/oauth-protected-resource") == 0
                  || strcmp (url, "/.well-known/oauth-protected-resource/mcp") == 0;
  if (!resource)
    return oauth_not_found (conn, NO_AUTHORIZATION_SERVER);
  if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0)
    return refuse (conn, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed: send GET");
  cleanup_free char *base = base_url (h, conn);
  cleanup_free char *resource_url = bx_xasprintf ("%s/mcp", base);
  json_auto_t *doc = json_pack ("{s:s, s:[], s:[s], s:s}", "resource", resource_url,
                                "authorization_servers", "bearer_methods_supported", "header",
                                "resource_name", "boxmaker mcp: " NO_AUTHORIZATION_SERVER);
  cleanup_free char *text = doc ? json_dumps (doc, JSON_COMPACT) : NULL;
  return answer (conn, MHD_HTTP_OK, "application/json", text ? text : "{}");
}

/* Compares without stopping at the first difference: the time taken says nothing about how
 * much of a guessed token was right. */
static bool
same_secret (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  unsigned char d = la != lb;
  for (size_t i = 0; i < la; i++)
    d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
  return d == 0;
}

static bool
loopback_origin (const char *origin)
{
  static const char *const hosts[] = { "http://localhost",  "http://127.0.0.1",  "http://[::1]",
                                       "https://localhost", "https://127.0.0.1", "https://[::1]" };
  for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++)
    {
      size_t n = strlen (hosts[i]);
      if (strncmp (origin, hosts[i], n) != 0)
        continue;
      const char *rest = origin + n;
      if (*rest == '\0')
        return true;
      if (*rest != ':' || rest[1] == '\0')
        continue;
      bool digits = true;
      for (const char *d = rest + 1; *d != '\0'; d++)
        digits = digits && *d >= '0' && *d <= '9';
      if (digits)
        return true;
    }
  return false;
}

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Closes C's connection: its thread reads the end and MHD lets it go.  Under h->lock. */
static void
cut (struct http *h, struct conn *c)
{
  shutdown (c->fd, SHUT_RDWR);
  c->cut = true;
  h->untrusted--;
}

/* An address as /proc/net/tcp and tcp6 write it: the address's 32-bit words as the kernel
 * holds them, in hex, then the port. */
static void
proc_address (const struct sockaddr *sa, char out[64])
{
  uint32_t w[4];
  if (sa->sa_family == AF_INET)
    {
      const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
      memcpy (w, &in->sin_addr, 4);
      snprintf (out, 64, "%08X:%04X", w[0], ntohs (in->sin_port));
      return;
    }
  const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
  memcpy (w, &in6->sin6_addr, 16);
  snprintf (out, 64, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3], ntohs (in6->sin6_port));
}

/* The uid that opened a TCP connection from a socket of this host (its own side's entry in
 * /proc/net/tcp: local address CLIENT, remote address SERVER), or -1 when it is not on this
 * host, or gone. */
static long
local_uid (const struct sockaddr *client, int fd)
{
  struct sockaddr_storage server = { 0 };
  socklen_t len = sizeof server;
  if (getsockname (fd, (struct sockaddr *)&server, &len) < 0 || len < sizeof (sa_family_t)
      || server.ss_family != client->sa_family)
    return -1;
  char want_local[64], want_remote[64];
  proc_address (client, want_local);
  proc_address ((struct sockaddr *)&server, want_remote);
  FILE *f = fopen (client->sa_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
  if (f == NULL)
    return -1;
  char line[512], local[64], remote[64];
  unsigned long uid;
  long found = -1;
  while (found < 0 && fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, " %*s %63s %63s %*s %*s %*s %*s %lu", local, remote, &uid) == 3
        && strcmp (local, want_local) == 0 && strcmp (remote, want_remote) == 0)
      found = (long)uid;
  fclose (f);
  return found;
}

/* Who is on the other end, for brokerd's audit line: "http 127.0.0.1:54321 uid 1000" (the
 * uid when the client's socket is on this host), "http [::1]:54321",
 * "http unix uid 1000 pid 4242". */
static void
describe (int fd, const struct sockaddr *sa, char out[BX_PEER_MAX + 1])
{
  char addr[INET6_ADDRSTRLEN] = "?";
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (sa != NULL && sa->sa_family == AF_INET)
    {
      const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
      inet_ntop (AF_INET, &in->sin_addr, addr, sizeof addr);
      snprintf (out, BX_PEER_MAX + 1, "http %s:%u", addr, ntohs (in->sin_port));
    }
  else if (sa != NULL && sa->sa_family == AF_INET6)
    {
      const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
      inet_ntop (AF_INET6, &in6->sin6_addr, addr, sizeof addr);
      snprintf (out, BX_PEER_MAX + 1, "http [%s]:%u", addr, ntohs (in6->sin6_port));
    }
  else if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
    snprintf (out, BX_PEER_MAX + 1, "http unix uid %u pid %ld", (unsigned)cred.uid, (long)cred.pid);
  else
    snprintf (out, BX_PEER_MAX + 1, "http unix");
  long uid = sa != NULL && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)
                 ? local_uid (sa, fd)
                 : -1;
  if (uid >= 0)
    {
      size_t n = strlen (out);
      snprintf (out + n, BX_PEER_MAX + 1 - n, " uid %ld", uid);
    }
}

static void
notify_connection (void *cls, struct MHD_Connection *conn, void **socket_context,
                   enum MHD_ConnectionNotificationCode toe)
{
  struct http *h = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED)
    {
      const union MHD_ConnectionInfo *fd
          = mhd->get_connection_info (conn, MHD_CONNECTION_INFO_CONNECTION_FD);
      const union MHD_ConnectionInfo *sa
          = mhd->get_connection_info (conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      if (fd == NULL)
        return; /* not tracked: MHD's own limit and idle time still hold */
      struct conn *c = bx_xmalloc (sizeof *c);
      memset (c, 0, sizeof *c);
      c->fd = fd->connect_fd;
      c->since = now_ms ();
      describe (c->fd, sa ? sa->client_addr : NULL, c->peer);
      pthread_mutex_lock (&h->lock);
      c->prev = h->tail;
      if (h->tail != NULL)
        h->tail->next = c;
      else
        h->head = c;
      h->tail = c;
      h->untrusted++;
      /* Full: the oldest untrusted connection goes, so a client that sends its request at
       * once always gets in, however many connections others hold half-open. */
      for (struct conn *o = h->head; o != NULL && h->untrusted > UNTRUSTED_MAX; o = o->next)
        if (!o->trusted && !o->cut)
          cut (h, o);
      pthread_cond_signal (&h->wake);
      pthread_mutex_unlock (&h->lock);
      *socket_context = c;
      return;
    }
  struct conn *c = *socket_context;
  if (c == NULL)
    return;
  pthread_mutex_lock (&h->lock);
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    h->head = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  else
    h->tail = c->prev;
  if (!c->trusted && !c->cut)
    h->untrusted--;
  pthread_mutex_unlock (&h->lock);
  free (c);
  *socket_context = NULL;
}

/* Closes each untrusted connection HEADERS_MS after it was accepted. */
static void *
sweeper (void *arg)
{
  struct http *h = arg;
  pthread_mutex_lock (&h->lock);
  while (!h->stopping)
    {
      int64_t now = now_ms (), next = -1;
      for (struct conn *c = h->head; c != NULL; c = c->next)
        if (!c->trusted && !c->cut)
          {
            if (now - c->since >= HEADERS_MS)
              cut (h, c);
            else if (next < 0 || c->since + HEADERS_MS < next)
              next = c->since + HEADERS_MS;
          }
      if (next < 0)
        {
          pthread_cond_wait (&h->wake, &h->lock);
          continue;
        }
      struct timespec ts
          = { .tv_sec = (time_t)(next / 1000), .tv_nsec = (long)(next % 1000) * 1000000 };
      pthread_cond_timedwait (&h->wake, &h->lock, &ts);
    }
  pthread_mutex_unlock (&h->lock);
  return NULL;
}

static struct conn *
conn_of (struct MHD_Connection *conn)
{
  const union MHD_ConnectionInfo *i
      = mhd->get_connection_info (conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

static bool
origin_allowed (const struct http *h, const char *origin)
{
  if (origin == NULL)
    return true; /* not a browser: Origin is what a browser cannot leave out */
  if (loopback_origin (origin))
    return true;
  for (size_t i = 0; h->origins[i] != NULL; i++)
    if (strcmp (origin, h->origins[i]) == 0)
      return true;
  return false;
}

/* The checks made once the headers are in, before the body is read; MHD_YES with *refused
 * set when one answered.  A request that has the token makes its connection trusted. */
static enum MHD_Result
gate (struct http *h, struct MHD_Connection *conn, const char *url, const char *method,
      const struct bx_mcp_version **v, bool *refused)
{
  *refused = true;
  bool served;
  enum MHD_Result r = well_known (h, conn, url, method, &served);
  if (served)
    return r;
  if (strcmp (url, "/mcp") != 0)
    return refuse (conn, MHD_HTTP_NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
  const char *origin = mhd->lookup_connection_value (conn, MHD_HEADER_KIND, "Origin");
  if (!origin_allowed (h, origin))
    return refuse (conn, MHD_HTTP_FORBIDDEN, "Forbidden: this Origin is not allowed");
  if (h->token != NULL)
    {
      const char *auth
          = mhd->lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
      bool bearer = auth != NULL && strncmp (auth, "Bearer ", 7) == 0;
      if (!bearer || !same_secret (auth + 7, h->token))
        return unauthorized (h, conn, bearer);
    }
  struct conn *c = conn_of (conn);
  if (c != NULL)
    {
      pthread_mutex_lock (&h->lock);
      if (!c->trusted && !c->cut)
        h->untrusted--;
      c->trusted = true;
      pthread_mutex_unlock (&h->lock);
    }
  if (strcmp (method, "POST") != 0)
    return refuse (conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                   "Method Not Allowed: this server opens no SSE stream; send POST");
  const char *version
      = mhd->lookup_connection_value (conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
  if (version == NULL)
    {
      *v = bx_mcp_version_http_default ();
      *refused = false;
      return MHD_YES;
    }
  *v = bx_mcp_version_find (version, BX_MCP_HTTP);
  if (*v == NULL)
    {
      cleanup_free char *shown = bx_printable (version, strlen (version), 64);
      cleanup_free char *spoken = bx_mcp_versions_spoken (BX_MCP_HTTP);
      cleanup_free char *text = bx_xasprintf ("Bad Request: unsupported MCP-Protocol-Version %s "
                                              "(this server speaks %s over HTTP)",
                                              shown, spoken);
      return refuse (conn, MHD_HTTP_BAD_REQUEST, text);
    }
  *refused = false;
  return MHD_YES;
}

static enum MHD_Result
handler (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
         const char *version, const char *upload, size_t *upload_size, void **state)
{
  struct http *h = cls;
  struct post *p = *state;
  if (p == NULL)
    {
      bool refused;
      const struct bx_mcp_version *v = NULL;
      enum MHD_Result r = gate (h, conn, url, method, &v, &refused);
      if (refused)
        return r;
      p = bx_xmalloc (sizeof *p);
      memset (p, 0, sizeof *p);
      struct conn *c = conn_of (conn);
      p->sink = (struct bx_mcp_sink){ .send = post_send,
                                      .done = post_done,
                                      .peer = c != NULL ? c->peer : NULL,
                                      .transport = BX_MCP_HTTP,
                                      .version = v };
      pthread_mutex_init (&p->lock, NULL);
      pthread_cond_init (&p->cond, NULL);
      p->refs = 1; /* the connection's */
      p->msgs = json_array ();
      *state = p;
      return MHD_YES;
    }
  if (*upload_size > 0)
    {
      if (!p->too_large && p->len + *upload_size <= BX_MCP_MESSAGE_MAX)
        {
          p->body = realloc (p->body, p->len + *upload_size);
          if (p->body == NULL)
            abort ();
          memcpy (p->body + p->len, upload, *upload_size);
          p->len += *upload_size;
        }
      else
        p->too_large = true;
      *upload_size = 0;
      return MHD_YES;
    }
  if (p->too_large)
    return refuse (conn, 413, "Payload Too Large: at most 8 MiB");

  /* The session answers now or from a call's thread.  A request still running (a tools/call)
   * is answered with an SSE stream when the client takes one, so progress notifications
   * reach it; otherwise, and for everything answered at once, with one JSON response. */
  pthread_mutex_lock (&p->lock);
  p->refs++; /* the session's, until sink->done */
  pthread_mutex_unlock (&p->lock);
  bx_mcp_server_handle (h->srv, p->body ? p->body : "", p->len, &p->sink);
  const char *accept = mhd->lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  pthread_mutex_lock (&p->lock);
  bool running = !p->done;
  pthread_mutex_unlock (&p->lock);
  if (running && accept != NULL && strstr (accept, "text/event-stream") != NULL)
    {
      struct MHD_Response *r
          = mhd->create_response_from_callback (MHD_SIZE_UNKNOWN, 4096, sse_read, p, sse_free);
      if (r != NULL)
        {
          pthread_mutex_lock (&p->lock);
          p->refs++; /* the stream's, until MHD frees it */
          pthread_mutex_unlock (&p->lock);
          mhd->add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
          mhd->add_response_header (r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
          enum MHD_Result ret = mhd->queue_response (conn, MHD_HTTP_OK, r);
          mhd->destroy_response (r);
          return ret;
        }
    }
  pthread_mutex_lock (&p->lock);
  while (!p->done)
    pthread_cond_wait (&p->cond, &p->lock);
  json_t *response = take_response (p);
  pthread_mutex_unlock (&p->lock);
  if (response == NULL)
    return answer (conn, MHD_HTTP_ACCEPTED, NULL, "");
  /* A message that could not be read at all (its error has no id) is input the server cannot
   * accept: 400, with the JSON-RPC error as the body. */
  unsigned status = json_object_get (response, "error") != NULL
                            && json_is_null (json_object_get (response, "id"))
                        ? MHD_HTTP_BAD_REQUEST
                        : MHD_HTTP_OK;
  cleanup_free char *text = json_dumps (response, JSON_COMPACT);
  json_decref (response);
  return answer (conn, status, "application/json", text ? text : "{}");
}

static void
completed (void *cls, struct MHD_Connection *conn, void **state,
           enum MHD_RequestTerminationCode why)
{
  post_unref (*state);
  *state = NULL;
}

static char *
read_token (const char *path)
{
  /* O_NONBLOCK: a FIFO in its place must not hold the start up; it is refused below. */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      fprintf (stderr, "boxmaker mcp: cannot read the token file %s: %s\n", path, strerror (errno));
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      fprintf (stderr, "boxmaker mcp: the token file %s is not a regular file\n", path);
      return NULL;
    }
  /* A token every local user can read keeps nobody out. */
  if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0)
    {
      fprintf (stderr,
               "boxmaker mcp: the token file %s can be read or written by other users: make it "
               "its owner's alone (chmod 0600)\n",
               path);
      return NULL;
    }
  char buf[TOKEN_MAX + 2];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read (fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t)n;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
    len--;
  buf[len] = '\0';
  if (len == 0 || len > TOKEN_MAX || strlen (buf) != len)
    {
      fprintf (stderr, "boxmaker mcp: the token file %s must hold 1 to %d bytes of text\n", path,
               TOKEN_MAX);
      return NULL;
    }
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
      {
        fprintf (stderr, "boxmaker mcp: the token in %s must be printable ASCII without spaces\n",
                 path);
        return NULL;
      }
  return bx_xstrdup (buf);
}

/* A listening socket for ADDRESS: a Unix socket path, or HOST:PORT ([V6]:PORT).  Without a
 * token (a Unix socket only), the socket is made 0600: only this user (and root) can connect,
 * and they could run boxmaker mcp themselves. */
static int
listen_on (const char *address, bool have_token)
{
  if (address[0] == '/')
    {
      struct sockaddr_un un = { .sun_family = AF_UNIX };
      if (strlen (address) >= sizeof un.sun_path)
        {
          fprintf (stderr, "boxmaker mcp: the socket path is too long: %s\n", address);
          return -1;
        }
      strcpy (un.sun_path, address);
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      /* The mode is set as bind creates the socket: no moment when others could connect.
       * No other thread runs yet to see this umask. */
      mode_t old = umask (have_token ? 0 : 0177);
      if (have_token)
        umask (old);
      int bound = fd < 0 ? -1 : bind (fd, (struct sockaddr *)&un, sizeof un);
      umask (old);
      if (fd < 0 || bound < 0 || listen (fd, 64) < 0)
        {
          fprintf (stderr, "boxmaker mcp: cannot listen on %s: %s\n", address, strerror (errno));
          if (fd >= 0)
            close (fd);
          return -1;
        }
      return fd;
    }

  cleanup_free char *host = bx_xstrdup (address);
  char *colon = strrchr (host, ':');
  if (colon == NULL || colon[1] == '\0')
    {
      fprintf (stderr, "boxmaker mcp: --http needs HOST:PORT or a socket path, not '%s'\n",
               address);
      return -1;
    }
  *colon = '\0';
  const char *port = colon + 1;
  char *h = host;
  if (h[0] == '[' && colon > host && colon[-1] == ']')
    {
      h++;
      colon[-1] = '\0';
    }
  struct addrinfo hints
      = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
  struct addrinfo *ai = NULL;
  int e = getaddrinfo (h, port, &hints, &ai);
  if (e != 0)
    {
      fprintf (stderr, "boxmaker mcp: cannot resolve %s: %s\n", address, gai_strerror (e));
      return -1;
    }
  int fd = socket (ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd >= 0)
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind (fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen (fd, 64) < 0)
    {
      fprintf (stderr, "boxmaker mcp: cannot listen on %s: %s\n", address, strerror (errno));
      if (fd >= 0)
        close (fd);
      freeaddrinfo (ai);
      return -1;
    }
  freeaddrinfo (ai);
  return fd;
}

int
bx_mcp_http (struct bx_mcp_server *srv, const struct bx_mcp_http_options *opts)
{
  if (opts->address[0] != '/' && opts->token_file == NULL)
    {
      fprintf (stderr, "boxmaker mcp: --http on a TCP address needs --token-file: any local user "
                       "could call tools as this user without one\n");
      return 2;
    }
  if ((mhd = bx_mhd_load ()) == NULL)
    return 1;
  struct http h = { .srv = srv, .address = opts->address, .origins = opts->origins };
  if (opts->token_file != NULL && (h.token = read_token (opts->token_file)) == NULL)
    return 2;
  int fd = listen_on (opts->address, h.token != NULL);
  if (fd < 0)
    {
      free (h.token);
      return 2;
    }
  pthread_mutex_init (&h.lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&h.wake, &attr);
  pthread_condattr_destroy (&attr);

  /* SIGTERM and SIGINT end the server; blocked before MHD's threads and the sweeper start, so
   * they inherit the mask and the signal comes to sigwait below. */
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGINT);
  pthread_sigmask (SIG_BLOCK, &set, NULL);

  int status = 0;
  pthread_t sweep;
  bool sweeping = pthread_create (&sweep, NULL, sweeper, &h) == 0;
  struct MHD_Daemon *d
      = sweeping ? mhd->start_daemon (
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0,
            NULL, NULL, handler, &h, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED,
            completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, &h,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)IDLE_S, MHD_OPTION_END)
                 : NULL;
  if (d == NULL)
    {
      fprintf (stderr, "boxmaker mcp: cannot start the HTTP server on %s\n", opts->address);
      close (fd);
      status = 1;
    }
  else
    {
      fprintf (stderr, "boxmaker mcp: listening on %s\n", opts->address);
      int sig;
      sigwait (&set, &sig);
      /* Calls in flight are cancelled first, so the connections waiting for them can end. */
      bx_mcp_server_shutdown (srv);
    }
  if (sweeping)
    {
      pthread_mutex_lock (&h.lock);
      h.stopping = true;
      pthread_cond_signal (&h.wake);
      pthread_mutex_unlock (&h.lock);
      pthread_join (sweep, NULL);
    }
  if (d != NULL)
    mhd->stop_daemon (d);
  if (opts->address[0] == '/')
    unlink (opts->address);
  pthread_cond_destroy (&h.wake);
  pthread_mutex_destroy (&h.lock);
  free (h.token);
  return status;
}
