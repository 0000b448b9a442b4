/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's command form, called by toolkit's main for
 *   toolkit egress-proxy --socket <path> --allow <pattern>[,<pattern>...]
 * ARGC and ARGV are toolkit's own (argv[1] is "egress-proxy").  Returns the exit status
 * (2 for a bad form, a bad --allow or a socket it cannot bind; it serves for ever
 * otherwise). */
#ifndef BX_TOOLKIT_EGRESS_MAIN_H
#define BX_TOOLKIT_EGRESS_MAIN_H

int bx_egress_proxy_main (int argc, char **argv);

#endif
