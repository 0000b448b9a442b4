/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: brokerd's config parser never crashes, leaks or reads out of bounds,
 * whatever the file holds, and a file it accepts has only clean folders and valid patterns. */
#include <stdint.h>
#include <stdlib.h>

#include "bx/cleanup.h"
#include "bx/hosts.h"
#include "config.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct bx_config *cfg = NULL;
  bx_error err = NULL;
  if (bx_config_parse ((const char *)data, size, "fuzz.yaml", &cfg, &err) == 0)
    {
      for (size_t i = 0; i < cfg->n_grants; i++)
        {
          for (size_t k = 0; k < cfg->grants[i].n_paths; k++)
            if (!bx_path_is_clean (cfg->grants[i].paths[k]))
              abort ();
          for (size_t k = 0; k < cfg->grants[i].n_hosts; k++)
            if (!bx_valid_host_port_pattern (cfg->grants[i].hosts[k]))
              abort ();
        }
      bx_config_free (cfg);
    }
  bx_error_free (&err);
  return 0;
}
