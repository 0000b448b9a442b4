/* SPDX-License-Identifier: Apache-2.0 */
/* `boxmaker stats`.  See stats.c. */
#ifndef BX_CLIENT_STATS_H
#define BX_CLIENT_STATS_H

#define BX_DEFAULT_METRICS_SOCKET "/run/boxmaker/metrics.sock"

/* ARGV: what follows "stats".  Returns the exit status. */
int bx_cmd_stats (int argc, char **argv);

#endif
