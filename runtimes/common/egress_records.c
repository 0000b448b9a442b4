/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "egress_records.h"

/* Room for every record the proxy may write, and then some. */
#define RECORDS_READ_MAX (BX_EGRESS_RECORDS_MAX * 256)

void
bx_runtime_pass_egress_records (const struct bx_host *host, int dir_fd, const char *name,
                                bx_run_result *result)
{
  if (!BX_HOST_HAS (host, egress_record))
    return;
  cleanup_close int fd
      = openat (dir_fd, BX_EGRESS_RECORDS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    {
      /* None when the proxy never started (that failure is logged already). */
      if (errno != ENOENT)
        host->log (host, BX_LOG_WARNING, "%s-egress: cannot read the egress records: %s", name,
                   strerror (errno));
      return;
    }
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return;
  cleanup_free char *buf = bx_xmalloc (RECORDS_READ_MAX);
  size_t len = 0;
  while (len < RECORDS_READ_MAX)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, buf + len, RECORDS_READ_MAX - len));
      if (n <= 0)
        break;
      len += (size_t)n;
    }
  size_t refused = 0;
  for (size_t start = 0; start < len;)
    {
      char *nl = memchr (buf + start, '\n', len - start);
      if (nl == NULL)
        break; /* a line cut short is not a record */
      size_t n = (size_t)(nl - (buf + start));
      if (n > 0 && host->egress_record (result, buf + start, n) < 0)
        refused++;
      start += n + 1;
    }
  if (refused > 0)
    host->log (host, BX_LOG_WARNING, "%s-egress: brokerd refused %zu egress record(s)", name,
               refused);
}
