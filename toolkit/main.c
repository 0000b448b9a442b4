/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit: the one program a sandbox runs, one subcommand per tool and one for the proxy.
 *
 *   toolkit read_file | write_file | shell | http_fetch    arguments as JSON on standard input
 *   toolkit mcp_call                                       one request to an MCP server, as
 *                                                          JSON on standard input (mcp_server.h)
 *   toolkit egress-proxy --socket <path> --allow <pattern>[,<pattern>...]
 *   toolkit wait                                           a sandbox made ahead of its call
 *                                                          (bwrap.so's pool): see wait_for_call
 *
 * Exit 0: the tool did its work; 1: it could not, for a reason the model reads on standard
 * output; 2: toolkit was run wrongly (the reason is on standard error). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/tools.h"
#include "tools.h"

#include "egress_local.h"
#include "egress_main.h"
#include "mcp_server.h"

/* The sanitizer build's toolkit runs in sandboxes whose seccomp filter refuses ptrace,
 * which LeakSanitizer's check at exit needs: the check then fails and ends toolkit with
 * status 1, which the runtimes read as the tool's own refusal, whatever toolkit meant.  Its
 * exit status is part of the contract; the leak check is not. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
const char *__lsan_default_options (void);
const char *
__lsan_default_options (void)
{
  return "detect_leaks=0";
}
#endif
#endif

/* The installed program always runs /bin/curl.  Only the test build (toolkit_test, never
 * installed) lets a test put a fake curl in its place. */
static const char *
curl_path (void)
{
#ifdef BX_TOOLKIT_TEST_BUILD
  const char *fake = getenv ("BX_TEST_CURL");
  if (fake != NULL && fake[0] != '\0')
    return fake;
#endif
  return BX_TOOLKIT_CURL;
}

/* Where the proxy's socket is mounted.  Only the test build lets a test name another. */
static const char *
egress_socket_path (void)
{
#ifdef BX_TOOLKIT_TEST_BUILD
  const char *other = getenv ("BX_TEST_EGRESS_SOCKET");
  if (other != NULL && other[0] != '\0')
    return other;
#endif
  return BX_EGRESS_SOCKET_PATH;
}

/* A descriptor toolkit opens must never become 0, 1 or 2 by accident (a pipe end there
 * would not survive dup2 into a child cleanly), so closed standard descriptors get
 * /dev/null. */
static void
open_standard_fds (void)
{
  for (int fd = 0; fd < 3; fd++)
    if (fcntl (fd, F_GETFD) < 0)
      {
        int n = open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd)
          close (n);
      }
}

/* Nothing toolkit did not open stays open: a descriptor of the host's (a folder, a mount) is
 * a way out of the sandbox through /proc/self/fd/N, for a command or MCP server toolkit
 * starts and for the paths read_file and write_file open alike.  The runtimes are meant to
 * pass none (tests/containment/open_descriptors.sh); toolkit takes none, its input and
 * output being the standard three.  close_range closes them at once; where the kernel lacks
 * it (an older one, gVisor's), each listed descriptor is closed. */
static void
close_inherited_fds (void)
{
  if (syscall (SYS_close_range, 3u, ~0u, 0u) == 0)
    return;
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return;
  for (struct dirent *e; (e = readdir (d)) != NULL;)
    {
      int fd = atoi (e->d_name);
      if (fd > 2 && fd != dirfd (d))
        close (fd);
    }
  closedir (d);
}

static int
usage (void)
{
  char names[128];
  return bx_toolkit_misused ("usage: toolkit %s|%s (the arguments as JSON on standard input)",
                             bx_tool_names ("|", "|", names, sizeof names),
                             bx_tool_name (BX_TOOL_MCP_CALL));
}

/* Each tool of the tool table (bx/tools.h), by its number. */
static bx_toolkit_tool_fn *const tool_runs[BX_TOOL_COUNT] = {
  [BX_TOOL_READ_FILE] = bx_toolkit_read_file,
  [BX_TOOL_WRITE_FILE] = bx_toolkit_write_file,
  [BX_TOOL_SHELL] = bx_toolkit_shell,
  [BX_TOOL_HTTP_FETCH] = bx_toolkit_http_fetch,
};

static int
run_tool (enum bx_tool tool)
{
  cleanup_error bx_error err = NULL;
  cleanup_free char *input = NULL;
  size_t len = 0;
  if (bx_toolkit_read_input (STDIN_FILENO, &input, &len, &err) < 0)
    return bx_toolkit_misused ("%s: %s", bx_tool_name (tool), bx_error_msg (err));

  struct bx_tool_args args = { 0 };
  /* proto's messages already start with the tool's name. */
  if (bx_toolkit_parse_input (tool, input, len, &args, &err) < 0)
    return bx_toolkit_misused ("%s", bx_error_msg (err));

  struct bx_toolkit_env env = { .curl = curl_path (), .egress_socket = egress_socket_path () };
  int status = tool_runs[tool](&args, &env, STDOUT_FILENO);
  bx_tool_args_clear (&args);
  return status;
}

/* The longest tool name wait_for_call takes, with its newline. */
#define WAIT_NAME_MAX 32

/* A sandbox made ahead of its call: says it is ready with one byte ('R') on standard output,
 * then reads the tool's name and a newline from standard input, a byte at a time so that
 * nothing of the arguments after it is taken, and runs that tool on the rest.  The runtime
 * writes the name only once the call's folders are mounted in, so the tool never runs
 * without them.  Only the tools a pool serves: not the proxy, and not mcp_call. */
static int
wait_for_call (void)
{
  if (TEMP_FAILURE_RETRY (write (STDOUT_FILENO, "R", 1)) != 1)
    return bx_toolkit_misused ("wait: cannot say it is ready");
  char name[WAIT_NAME_MAX + 1];
  size_t len = 0;
  for (;;)
    {
      char c;
      ssize_t n = TEMP_FAILURE_RETRY (read (STDIN_FILENO, &c, 1));
      if (n <= 0)
        return bx_toolkit_misused ("wait: no tool came");
      if (c == '\n')
        break;
      if (len == WAIT_NAME_MAX)
        return bx_toolkit_misused ("wait: the tool's name is too long");
      name[len++] = c;
    }
  name[len] = '\0';
  enum bx_tool tool;
  if (bx_tool_from_toolkit_name (name, &tool) < 0 || tool_runs[tool] == NULL)
    return bx_toolkit_misused ("wait: unknown tool \"%s\"", name);
  return run_tool (tool);
}

int
main (int argc, char **argv)
{
  open_standard_fds ();
  close_inherited_fds ();
  if (argc < 2)
    return usage ();

  if (strcmp (argv[1], "egress-proxy") == 0)
    {
      return bx_egress_proxy_main (argc, argv);
    }
  if (strcmp (argv[1], "wait") == 0 && argc == 2)
    {
      signal (SIGPIPE, SIG_IGN);
      return wait_for_call ();
    }

  enum bx_tool tool;
  if (bx_tool_from_toolkit_name (argv[1], &tool) < 0
      || (tool_runs[tool] == NULL && tool != BX_TOOL_MCP_CALL))
    {
      bx_toolkit_misused ("unknown tool \"%s\"", argv[1]);
      return usage ();
    }
  if (argc != 2)
    return bx_toolkit_misused ("%s takes no command-line arguments: they come as JSON on "
                               "standard input",
                               argv[1]);

  /* A reader that went away is a write error to handle, not a death. */
  signal (SIGPIPE, SIG_IGN);
  /* mcp_call's arguments are brokerd's, not a model's: its own parser reads them. */
  if (tool == BX_TOOL_MCP_CALL)
    return bx_toolkit_mcp_server (STDIN_FILENO, STDOUT_FILENO, egress_socket_path ());
  return run_tool (tool);
}
