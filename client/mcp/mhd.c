/* SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <stdio.h>

#include "mhd.h"

#define LOAD(field, symbol)                                                                        \
  do                                                                                               \
    {                                                                                              \
      void *p = dlsym (lib, #symbol);                                                              \
      if (p == NULL)                                                                               \
        {                                                                                          \
          fprintf (stderr, "boxmaker mcp: %s has no %s\n", BX_MHD_SONAME, #symbol);                \
          return NULL;                                                                             \
        }                                                                                          \
      *(void **)&table.field = p;                                                                  \
    }                                                                                              \
  while (0)

const struct bx_mhd *
bx_mhd_load (void)
{
  static struct bx_mhd table;
  /* Kept loaded for the life of the process: the server's threads run in it. */
  void *lib = dlopen (BX_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    {
      fprintf (stderr, "boxmaker mcp: --http needs %s (Debian: libmicrohttpd12): %s\n",
               BX_MHD_SONAME, dlerror ());
      return NULL;
    }
  LOAD (start_daemon, MHD_start_daemon);
  LOAD (stop_daemon, MHD_stop_daemon);
  LOAD (create_response_from_buffer, MHD_create_response_from_buffer);
  LOAD (create_response_from_callback, MHD_create_response_from_callback);
  LOAD (add_response_header, MHD_add_response_header);
  LOAD (queue_response, MHD_queue_response);
  LOAD (destroy_response, MHD_destroy_response);
  LOAD (lookup_connection_value, MHD_lookup_connection_value);
  LOAD (get_connection_info, MHD_get_connection_info);
  return &table;
}
