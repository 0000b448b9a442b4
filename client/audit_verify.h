/* SPDX-License-Identifier: Apache-2.0 */
/* `boxmaker audit verify`.  See audit_verify.c. */
#ifndef BX_CLIENT_AUDIT_VERIFY_H
#define BX_CLIENT_AUDIT_VERIFY_H

/* ARGV: what follows "audit verify".  Returns the exit status. */
int bx_cmd_audit_verify (int argc, char **argv);

#endif
