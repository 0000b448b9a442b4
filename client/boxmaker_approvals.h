/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' commands of the boxmaker program, over brokerd's admin socket
 * (docs/protocol.md, "The admin socket"):
 *
 *   boxmaker approvals [--watch] [--json] [--admin-socket PATH]
 *   boxmaker approve ID [--admin-socket PATH]
 *   boxmaker decline ID [--reason TEXT] [--admin-socket PATH]
 *
 * Exit status: 0 done, 1 brokerd refused (no call waits with that id, not in the admin
 * group), 2 usage, 3 the admin socket cannot be reached or broke the protocol. */
#ifndef BX_CLIENT_APPROVALS_H
#define BX_CLIENT_APPROVALS_H

#define BX_CLIENT_DEFAULT_ADMIN_SOCKET "/run/boxmaker/admin.sock"

/* ARGV holds what follows the command's name. */
int bx_cli_approvals (int argc, char **argv);
int bx_cli_approve (int argc, char **argv);
int bx_cli_decline (int argc, char **argv);

#endif
