/* SPDX-License-Identifier: Apache-2.0 */
/* The one golden-file comparer (libvirt's virTestCompareToFile): GOT against the file PATH,
 * and with BX_REGENERATE_GOLDEN=1 in the environment a mismatch rewrites the file instead
 * (review the change before committing it).  golden-orphans.sh, a test of its own, fails on a
 * golden file no test names. */
#ifndef BX_TEST_GOLDEN_H
#define BX_TEST_GOLDEN_H

void bx_golden_check (const char *path, const char *got);

#endif
