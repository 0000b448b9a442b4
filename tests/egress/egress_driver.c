/* SPDX-License-Identifier: Apache-2.0 */
/* The proxy's command form alone, for builds without the toolkit program. */
#include "egress_main.h"

int
main (int argc, char **argv)
{
  return bx_egress_proxy_main (argc, argv);
}
