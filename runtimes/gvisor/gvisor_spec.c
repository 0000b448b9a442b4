/* SPDX-License-Identifier: Apache-2.0 */
/* The OCI bundle's config.json of one sandbox, a pure function of the config and the box,
 * so a golden file can pin it.  The sandbox's processes run as an unprivileged uid in
 * gVisor's own kernel with no capability, the root read-only, every grant folder bound
 * non-recursively from a mount point of the module's own (gvisor_call.c makes it from a
 * descriptor opened without following links), and the limits of the call: memory and CPU
 * in the sandbox's cgroup (which holds gVisor's kernel and every task in it), processes
 * and file size as rlimits that gVisor's kernel enforces on the tasks it runs.  A pids
 * limit in the cgroup would count the threads of gVisor's kernel itself, not the tool's
 * processes, and kill the sandbox when its kernel needs one more thread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"

#include "gvisor.h"

struct text
{
  char *s;
  size_t len, cap;
};

static void
add (struct text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap)
    {
      while (t->len + n + 1 > t->cap)
        t->cap = t->cap ? t->cap * 2 : 1024;
      t->s = bx_xrealloc (t->s, t->cap);
    }
  memcpy (t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

static void __attribute__ ((format (printf, 2, 3))) addf (struct text *t, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *s = bx_xvasprintf (fmt, ap);
  va_end (ap);
  add (t, s, strlen (s));
}

/* S as a JSON string, quotes included. */
static void
add_string (struct text *t, const char *s)
{
  add (t, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        {
          char e[2] = { '\\', (char)*p };
          add (t, e, 2);
        }
      else if (*p < 0x20 || *p == 0x7f)
        addf (t, "\\u%04x", *p);
      else
        add (t, (const char *)p, 1);
    }
  add (t, "\"", 1);
}

static void
add_mount (struct text *t, const char *dest, const char *type, const char *source,
           const char *options)
{
  add (t, ",\n    {\"destination\": ", strlen (",\n    {\"destination\": "));
  add_string (t, dest);
  addf (t, ", \"type\": \"%s\", \"source\": ", type);
  add_string (t, source);
  addf (t, ", \"options\": [%s]}", options);
}

static void
add_rlimit (struct text *t, const char *type, unsigned long long value, bool last)
{
  addf (t, "      {\"type\": \"%s\", \"hard\": %llu, \"soft\": %llu}%s\n", type, value, value,
        last ? "" : ",");
}

char *
bx_gvisor_spec_json (const struct bx_gvisor_config *cfg, const struct bx_gvisor_box *box)
{
  struct text t = { 0 };
  addf (&t,
        "{\n  \"ociVersion\": \"1.0.2\",\n  \"process\": {\n    \"user\": {\"uid\": %lld, "
        "\"gid\": %lld},\n    \"args\": [",
        (long long)(box->uid ? box->uid : cfg->uid), (long long)(box->gid ? box->gid : cfg->gid));
  for (size_t i = 0; box->args[i] != NULL; i++)
    {
      if (i > 0)
        add (&t, ", ", 2);
      add_string (&t, box->args[i]);
    }
  add (&t, "],\n", 3);
  add (&t, "    \"env\": [", strlen ("    \"env\": ["));
  cleanup_free char *path = bx_xasprintf ("PATH=%s", box->path != NULL ? box->path : "/bin");
  add_string (&t, path);
  addf (&t, ", \"HOME=/tmp\"],\n    \"cwd\": \"/tmp\",\n"
            "    \"noNewPrivileges\": true,\n"
            "    \"capabilities\": {\"bounding\": [], \"effective\": [], \"inheritable\": [], "
            "\"permitted\": [], \"ambient\": []},\n    \"rlimits\": [\n");
  add_rlimit (&t, "RLIMIT_FSIZE", (unsigned long long)box->file_size, false);
  add_rlimit (&t, "RLIMIT_NOFILE", 1024, false);
  add_rlimit (&t, "RLIMIT_CORE", 0, false);
  add_rlimit (&t, "RLIMIT_NPROC", (unsigned long long)box->pids, true);
  add (&t, "    ]\n  },\n  \"root\": {\"path\": ", strlen ("    ]\n  },\n  \"root\": {\"path\": "));
  add_string (&t, box->root != NULL ? box->root : cfg->rootfs);
  addf (&t, ", \"readonly\": true},\n  \"hostname\": \"boxmaker\",\n  \"mounts\": [\n"
            "    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"}");
  add_mount (&t, "/dev", "tmpfs", "tmpfs", "\"nosuid\", \"mode=755\"");
  cleanup_free char *tmp = bx_xasprintf ("\"nosuid\", \"nodev\", \"mode=1777\", \"size=%llu\"",
                                         (unsigned long long)cfg->tmp_size);
  add_mount (&t, "/tmp", "tmpfs", "tmpfs", tmp);
  /* rbind: the protected paths call.c mounted inside a grant folder's mount point come
   * with it, each with its own flags (read-only); nothing else is mounted there. */
  for (size_t i = 0; i < box->mount_count; i++)
    add_mount (&t, box->mounts[i].dest, "bind", box->mounts[i].source,
               box->mounts[i].writable ? "\"rbind\", \"rw\", \"nosuid\", \"nodev\""
                                       : "\"rbind\", \"ro\", \"nosuid\", \"nodev\"");
  if (box->egress_source != NULL)
    add_mount (&t, "/run/egress", "bind", box->egress_source,
               box->egress_writable ? "\"bind\", \"rw\", \"nosuid\", \"nodev\""
                                    : "\"bind\", \"ro\", \"nosuid\", \"nodev\"");
  add (&t, "\n  ],\n  \"linux\": {\n    \"namespaces\": [{\"type\": \"pid\"}, ",
       strlen ("\n  ],\n  \"linux\": {\n    \"namespaces\": [{\"type\": \"pid\"}, "));
  /* The proxy keeps the network namespace runsc starts in (slirp4netns's); every other
   * sandbox gets an empty one, and runsc --network=none gives it loopback only. */
  if (!box->egress_writable)
    add (&t, "{\"type\": \"network\"}, ", strlen ("{\"type\": \"network\"}, "));
  add (&t, "{\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}",
       strlen ("{\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}"));
  /* A user namespace: the sandbox's root is never the host's, and what it writes through a
   * grant belongs on the host to the mapped uid (id_base + its uid inside).  runsc cannot
   * set up a sandbox on the host's network stack (the proxy's, in slirp4netns's namespace)
   * in one; the proxy is toolkit's own code and writes only its egress folder. */
  if (!box->egress_writable)
    addf (&t,
          ", {\"type\": \"user\"}],\n    \"uidMappings\": [{\"containerID\": 0, \"hostID\": "
          "%lld, \"size\": 65536}],\n    \"gidMappings\": [{\"containerID\": 0, \"hostID\": "
          "%lld, \"size\": 65536}],\n",
          (long long)cfg->id_base, (long long)cfg->id_base);
  else
    add (&t, "],\n", 3);
  /* The quota over a period of 100 ms: 1000 thousandths are one whole CPU. */
  addf (&t,
        "    \"resources\": {\"memory\": {\"limit\": %llu, \"swap\": %llu}, \"cpu\": "
        "{\"quota\": %lld, \"period\": 100000}},\n",
        (unsigned long long)box->memory, (unsigned long long)box->memory,
        (long long)box->cpu_millis * 100);
  if (cfg->seccomp != NULL)
    addf (&t, "    \"seccomp\": %s,\n", cfg->seccomp);
  add (&t, "    \"cgroupsPath\": ", strlen ("    \"cgroupsPath\": "));
  add_string (&t, box->cgroup);
  add (&t, "\n  }\n}\n", strlen ("\n  }\n}\n"));
  return t.s;
}
