/* SPDX-License-Identifier: Apache-2.0 */
/* libmicrohttpd, loaded when `boxmaker mcp --http` asks for it rather than linked: with it
 * come GnuTLS and eight more libraries, whose loading and relocation cost every boxmaker
 * command (a `boxmaker call` above all) about 1.5 ms of start-up.  Only its header is used
 * at build time; the functions http.c calls go through this table. */
#ifndef BX_MCP_MHD_H
#define BX_MCP_MHD_H

#include <microhttpd.h>

struct bx_mhd
{
  __typeof__ (&MHD_start_daemon) start_daemon;
  __typeof__ (&MHD_stop_daemon) stop_daemon;
  __typeof__ (&MHD_create_response_from_buffer) create_response_from_buffer;
  __typeof__ (&MHD_create_response_from_callback) create_response_from_callback;
  __typeof__ (&MHD_add_response_header) add_response_header;
  __typeof__ (&MHD_queue_response) queue_response;
  __typeof__ (&MHD_destroy_response) destroy_response;
  __typeof__ (&MHD_lookup_connection_value) lookup_connection_value;
  __typeof__ (&MHD_get_connection_info) get_connection_info;
};

/* The table, loaded once (BX_MHD_SONAME, which the build checked); NULL with a message on
 * standard error when the library or one of its functions is missing. */
const struct bx_mhd *bx_mhd_load (void);

#endif
