/* SPDX-License-Identifier: Apache-2.0 */
/* What podman.so and bwrap.so share of the egress proxy: its connection records. */
#ifndef BX_RUNTIME_EGRESS_RECORDS_H
#define BX_RUNTIME_EGRESS_RECORDS_H

#include <boxmaker/runtime.h>

/* Hands each whole line of the proxy's records (BX_EGRESS_RECORDS_FILE in the folder DIR_FD,
 * at most BX_EGRESS_RECORDS_MAX lines of under 200 bytes) to the host for the call's audit
 * line.  Called after the proxy is gone, so every record is in; the file is opened without
 * following a link (the proxy's sandbox can write the folder) and read only when it is a
 * regular file.  NAME (the call's) is for the log. */
void bx_runtime_pass_egress_records (const struct bx_host *host, int dir_fd, const char *name,
                                     bx_run_result *result);

#endif
