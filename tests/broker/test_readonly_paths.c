/* SPDX-License-Identifier: Apache-2.0 */
/* Protected paths (broker/policy/readonly_paths.h): which mounts a folder's protected subpaths
 * become, on a real temporary tree, and the refusals (a symbolic link anywhere on the way). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "readonly_paths.h"
#include "test_main.h"

static char root[64];

static void
setup (void)
{
  strcpy (root, "/tmp/bx-protect-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (root));
}

static void
teardown (void)
{
  cleanup_free char *cmd = bx_xasprintf ("rm -rf '%s'", root);
  ck_assert_int_eq (system (cmd), 0);
}

static void
make_dir (const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  ck_assert_int_eq (mkdir (p, 0755), 0);
}

static void
make_file (const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  int fd = open (p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ck_assert_int_ge (fd, 0);
  close (fd);
}

static void
make_link (const char *target, const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  ck_assert_int_eq (symlink (target, p), 0);
}

/* The list as "path:rw|ro" lines, paths relative to the root. */
static char *
shown (const struct bx_protect_list *list)
{
  char *out = bx_xstrdup ("");
  for (size_t i = 0; i < list->count; i++)
    {
      ck_assert (strncmp (list->mounts[i].path, root, strlen (root)) == 0);
      char *more = bx_xasprintf ("%s%s:%s\n", out, list->mounts[i].path + strlen (root) + 1,
                                 list->mounts[i].writable ? "rw" : "ro");
      free (out);
      out = more;
    }
  return out;
}

/* The mounts protecting SUBPATHS in the root; the placeholders stay held in REFS. */
static char *
protect_held (const char *const *subpaths, size_t n, struct bx_placeholder_refs *refs, int *rc,
              bx_error *detail)
{
  struct bx_protect_list list = { 0 };
  *rc = bx_protect_folder (root, subpaths, n, &list, refs, detail);
  char *s = shown (&list);
  bx_protect_list_clear (&list);
  return s;
}

/* The same for a call that ends at once: its placeholders are released. */
static char *
protect (const char *const *subpaths, size_t n, int *rc, bx_error *detail)
{
  struct bx_placeholder_refs refs = { 0 };
  char *s = protect_held (subpaths, n, &refs, rc, detail);
  bx_placeholder_release (&refs);
  ck_assert_uint_eq (refs.count, 0);
  return s;
}

/* What the root holds, as "name" lines sorted, with "/" after folders, recursively. */
static char *
listing (void)
{
  cleanup_free char *cmd = bx_xasprintf ("cd '%s' && find . -mindepth 1 -printf '%%P%%y\\n' | "
                                         "sed 's/d$/\\//; s/f$//' | LC_ALL=C sort | tr '\\n' ' '",
                                         root);
  FILE *f = popen (cmd, "r");
  ck_assert_ptr_nonnull (f);
  char buf[4096] = "";
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  ck_assert_int_eq (pclose (f), 0);
  return bx_xstrdup (buf);
}

/* "uid mode type size" of REL, relative to the root. */
static char *
described (const char *rel)
{
  cleanup_free char *p = bx_xasprintf ("%s/%s", root, rel);
  struct stat st;
  if (lstat (p, &st) < 0)
    return bx_xstrdup ("missing");
  return bx_xasprintf ("%s %o %s %lld", st.st_uid == geteuid () ? "brokerd" : "other",
                       (unsigned)(st.st_mode & 07777), S_ISDIR (st.st_mode) ? "folder" : "file",
                       S_ISDIR (st.st_mode) ? 0LL : (long long)st.st_size);
}

/* The mount lines of the default protected paths from index FROM on, all missing: a
 * placeholder for the first component of each. */
static char *
startup_files_from (size_t from)
{
  char *out = bx_xstrdup ("");
  for (size_t i = from; i < bx_protect_default_count; i++)
    {
      char *more = bx_xasprintf ("%s%.*s:ro\n", out, (int)strcspn (bx_protect_defaults[i], "/"),
                                 bx_protect_defaults[i]);
      free (out);
      out = more;
    }
  return out;
}

START_TEST (test_a_repository_gets_its_hooks_and_config_read_only_and_git_pinned)
{
  make_dir (".git");
  make_dir (".git/hooks");
  make_file (".git/config");
  make_file (".bashrc");
  make_dir ("src");
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* The other start-up files are missing: placeholders, read-only, gone afterwards. */
  cleanup_free char *rest = startup_files_from (4);
  cleanup_free char *want
      = bx_xasprintf (".git:rw\n.git/hooks:ro\n.git/config:ro\nHEAD:ro\n.bashrc:ro\n%s", rest);
  ck_assert_str_eq (s, want);
  cleanup_free char *left = listing ();
  ck_assert_str_eq (left, ".bashrc .git/ .git/config .git/hooks/ src/ ");
}
END_TEST

START_TEST (test_a_folder_without_git_gets_placeholders_for_the_call)
{
  struct bx_placeholder_refs refs = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s
      = protect_held (bx_protect_defaults, bx_protect_default_count, &refs, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* One .git folder stands for both .git/hooks and .git/config, read-only whole. */
  cleanup_free char *rest = startup_files_from (2);
  cleanup_free char *want = bx_xasprintf (".git:ro\n%s", rest);
  ck_assert_str_eq (s, want);
  cleanup_free char *git = described (".git");
  ck_assert_str_eq (git, "brokerd 555 folder 0");
  cleanup_free char *bashrc = described (".bashrc");
  ck_assert_str_eq (bashrc, "brokerd 444 file 0");
  cleanup_free char *during = listing ();
  ck_assert (strstr (during, ".git/ ") != NULL);
  ck_assert (strstr (during, ".git/hooks") == NULL);
  bx_placeholder_release (&refs);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
}
END_TEST

START_TEST (test_a_repository_without_hooks_gets_a_hooks_placeholder)
{
  make_dir (".git");
  struct bx_placeholder_refs refs = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect_held (bx_protect_defaults, 2, &refs, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* git makes hooks/ a folder, config a file: the placeholders are the same kinds. */
  ck_assert_str_eq (s, ".git:rw\n.git/hooks:ro\n.git/config:ro\n");
  cleanup_free char *hooks = described (".git/hooks");
  ck_assert_str_eq (hooks, "brokerd 555 folder 0");
  cleanup_free char *config = described (".git/config");
  ck_assert_str_eq (config, "brokerd 444 file 0");
  bx_placeholder_release (&refs);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, ".git/ ");
}
END_TEST

/* An empty file stops the sandbox from making anything below it, at a fraction of a
 * folder's cost; only git's own folders are folders. */
START_TEST (test_a_deeper_missing_path_gets_a_file_for_its_first_missing_part)
{
  const char *subs[] = { ".config/fish/config.fish", "proj/.git" };
  struct bx_placeholder_refs refs = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect_held (subs, 2, &refs, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".config:ro\nproj:ro\n");
  cleanup_free char *config = described (".config");
  ck_assert_str_eq (config, "brokerd 444 file 0");
  cleanup_free char *proj = described ("proj");
  ck_assert_str_eq (proj, "brokerd 444 file 0");
  bx_placeholder_release (&refs);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
}
END_TEST

START_TEST (test_two_calls_share_a_placeholder_and_the_last_removes_it)
{
  const char *subs[] = { ".git/hooks", ".bashrc" };
  struct bx_placeholder_refs a = { 0 }, b = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *sa = protect_held (subs, 2, &a, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* The second call finds the first one's placeholders and protects them the same way. */
  cleanup_free char *sb = protect_held (subs, 2, &b, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (sa, ".git:ro\n.bashrc:ro\n");
  ck_assert_str_eq (sb, sa);
  bx_placeholder_release (&a);
  cleanup_free char *between = listing ();
  ck_assert_str_eq (between, ".bashrc .git/ ");
  bx_placeholder_release (&b);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
}
END_TEST

START_TEST (test_a_placeholder_that_changed_is_left_in_place)
{
  const char *subs[] = { ".git/hooks", ".bashrc", ".profile" };
  struct bx_placeholder_refs refs = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect_held (subs, 3, &refs, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".git:ro\n.bashrc:ro\n.profile:ro\n");
  /* Someone who may (the owner, root) put content in .git and .bashrc, and replaced
   * .profile with an empty file of another user's: none of it is brokerd's to remove. */
  cleanup_free char *cmd = bx_xasprintf ("cd '%s' && chmod 755 .git && touch .git/HEAD && "
                                         "chmod 644 .bashrc && echo x > .bashrc && rm .profile "
                                         "&& touch .profile && chown 12345 .profile",
                                         root);
  ck_assert_int_eq (system (cmd), 0);
  /* brokerd's log (stderr) names each one left and why. */
  fflush (stderr);
  int saved = dup (2);
  FILE *log = tmpfile ();
  ck_assert_ptr_nonnull (log);
  dup2 (fileno (log), 2);
  bx_placeholder_release (&refs);
  fflush (stderr);
  dup2 (saved, 2);
  close (saved);
  char text[2048] = "";
  rewind (log);
  text[fread (text, 1, sizeof text - 1, log)] = '\0';
  fclose (log);
  cleanup_free char *want = bx_xasprintf (
      "brokerd: placeholder %s/.git left in place: it is not empty\n"
      "brokerd: placeholder %s/.bashrc left in place: it is not empty\n"
      "brokerd: placeholder %s/.profile left in place: it is no longer the placeholder brokerd "
      "made\n",
      root, root, root);
  ck_assert_str_eq (text, want);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, ".bashrc .git/ .git/HEAD .profile ");
}
END_TEST

/* A brokerd in a child process that starts with HOME and makes placeholders with MAKE (CTX),
 * holding them; its pid once MAKE succeeded.  It then waits to be killed (kill_brokerd). */
static pid_t
brokerd_that_made (const char *home, bool (*make) (const void *ctx), const void *ctx)
{
  int ready[2];
  ck_assert_int_eq (pipe (ready), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      bx_placeholders_start (home);
      char ok = make (ctx) ? 'y' : 'n';
      if (write (ready[1], &ok, 1) != 1)
        _exit (1);
      pause ();
      _exit (0);
    }
  close (ready[1]);
  char ok = 0;
  ck_assert_int_eq (read (ready[0], &ok, 1), 1);
  close (ready[0]);
  ck_assert_int_eq (ok, 'y');
  return pid;
}

/* A brokerd killed in the middle of its calls. */
static void
kill_brokerd (pid_t pid)
{
  kill (pid, SIGKILL);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
}

/* The placeholders of the protected paths of a subs_list, in one call, held. */
struct subs_list
{
  const char *const *subs;
  size_t n;
};

static bool
make_in_one_call (const void *ctx)
{
  const struct subs_list *l = ctx;
  struct bx_placeholder_refs refs = { 0 };
  struct bx_protect_list list = { 0 };
  cleanup_error bx_error detail = NULL;
  return bx_protect_folder (root, l->subs, l->n, &list, &refs, &detail) == 0;
}

START_TEST (test_a_placeholder_left_by_a_killed_brokerd_is_swept_at_start)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  const char *subs[] = { ".git/hooks", ".bashrc", ".profile" };
  /* A brokerd that makes placeholders and is killed in the middle of its call. */
  const struct subs_list three = { subs, 3 };
  pid_t pid = brokerd_that_made (home, make_in_one_call, &three);
  cleanup_free char *made = listing ();
  ck_assert_str_eq (made, ".bashrc .git/ .profile ");
  /* One record file, a line for each placeholder made. */
  cleanup_free char *records
      = bx_xasprintf ("ls '%s'/placeholders/*/ | grep -qx log && "
                      "test \"$(grep -c '^+ ' '%s'/placeholders/*/log)\" = 3",
                      home, home);
  ck_assert_int_eq (system (records), 0);
  /* A brokerd starting while that one lives (sharing the home) touches none of it. */
  bx_placeholders_start (home);
  cleanup_free char *alive = listing ();
  ck_assert_str_eq (alive, made);
  ck_assert_int_eq (system (records), 0);
  kill_brokerd (pid);
  /* The owner put a file of theirs in place of one meanwhile: that one stays.  (Writing into
   * one would write into every file placeholder of the folder: they are names of one file.) */
  cleanup_free char *cmd
      = bx_xasprintf ("rm -f '%s/.profile' && echo x > '%s/.profile'", root, root);
  ck_assert_int_eq (system (cmd), 0);
  bx_placeholders_start (home);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, ".profile ");
  /* No record is left, nor the folders of them. */
  cleanup_free char *gone = bx_xasprintf ("%s/placeholders", home);
  struct stat st;
  ck_assert_int_eq (lstat (gone, &st), -1);
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

/* The file placeholders of a folder are names of one file: the record of one that went names
 * its path, so the others' records still stand for the next start. */
/* .bashrc and .profile in two calls, the second of which ends. */
static bool
make_two_and_end_the_second (const void *ctx)
{
  (void)ctx;
  const char *first[] = { ".bashrc" }, *second[] = { ".profile" };
  struct bx_placeholder_refs a = { 0 }, b = { 0 };
  struct bx_protect_list list = { 0 };
  cleanup_error bx_error detail = NULL;
  bool made = bx_protect_folder (root, first, 1, &list, &a, &detail) == 0
              && bx_protect_folder (root, second, 1, &list, &b, &detail) == 0;
  bx_placeholder_release (&b);
  return made;
}

START_TEST (test_a_name_still_held_by_a_killed_brokerd_is_swept_after_another_went)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  pid_t pid = brokerd_that_made (home, make_two_and_end_the_second, NULL);
  cleanup_free char *held = listing ();
  ck_assert_str_eq (held, ".bashrc ");
  kill_brokerd (pid);
  bx_placeholders_start (home);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
  cleanup_free char *gone = bx_xasprintf ("%s/placeholders", home);
  struct stat st;
  ck_assert_int_eq (lstat (gone, &st), -1);
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

/* Makes the placeholders of SUBS as a brokerd that is then killed (a child process). */
static void
placeholders_of_a_killed_brokerd (const char *home, const char *const *subs, size_t n)
{
  const struct subs_list l = { subs, n };
  kill_brokerd (brokerd_that_made (home, make_in_one_call, &l));
}

/* Placeholders for .bashrc, .profile and .zshrc, one call each, with the hook (HOME, K) run
 * before the K-th of the other two. */
struct one_by_one
{
  const char *home;
  void (*hook) (const char *home, int k);
};

static bool
make_one_by_one (const void *ctx)
{
  const struct one_by_one *o = ctx;
  signal (SIGXFSZ, SIG_IGN); /* a file size limit makes writes fail instead */
  const char *subs[] = { ".bashrc", ".profile", ".zshrc" };
  for (int k = 0; k < 3; k++)
    {
      if (k > 0)
        o->hook (o->home, k);
      struct bx_placeholder_refs refs = { 0 };
      struct bx_protect_list list = { 0 };
      cleanup_error bx_error detail = NULL;
      if (bx_protect_folder (root, subs + k, 1, &list, &refs, &detail) < 0)
        return false;
    }
  return true;
}

/* Those three made by a brokerd that is then killed. */
static void
placeholders_of_a_brokerd_killed_after (const char *home, void (*hook) (const char *, int))
{
  const struct one_by_one o = { home, hook };
  kill_brokerd (brokerd_that_made (home, make_one_by_one, &o));
}

static void
remove_the_records (const char *home, int k)
{
  if (k != 1)
    return;
  cleanup_free char *cmd = bx_xasprintf ("rm -rf '%s'/placeholders/*", home);
  if (system (cmd) != 0)
    _exit (1);
}

/* Someone removes brokerd's folder of records while it runs: the next placeholder makes it
 * again, with the live ones in it, so the next start still sweeps them all. */
START_TEST (test_records_removed_while_brokerd_runs_are_made_again)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  placeholders_of_a_brokerd_killed_after (home, remove_the_records);
  cleanup_free char *left = listing ();
  ck_assert_str_eq (left, ".bashrc .profile .zshrc ");
  bx_placeholders_start (home);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

/* The file size limit set just past the record file's end before .profile's record, and
 * lifted again before .zshrc's: .profile's line goes in only in part. */
static void
cut_the_second_record (const char *home, int k)
{
  struct rlimit lim;
  if (getrlimit (RLIMIT_FSIZE, &lim) < 0)
    _exit (1);
  if (k == 1)
    {
      /* The record file's name holds the brokerd's token: the shell finds it. */
      cleanup_free char *cmd = bx_xasprintf ("stat -c %%s '%s'/placeholders/*/log", home);
      FILE *f = popen (cmd, "r");
      long size = 0;
      if (f == NULL || fscanf (f, "%ld", &size) != 1 || pclose (f) != 0)
        _exit (1);
      lim.rlim_cur = (rlim_t)size + 10;
    }
  else
    lim.rlim_cur = lim.rlim_max;
  if (setrlimit (RLIMIT_FSIZE, &lim) < 0)
    _exit (1);
}

/* A record line cut short (a full file system) is cut off again, so the records after it
 * still count at the next start: only the placeholder whose record failed is left. */
START_TEST (test_a_record_cut_short_hides_no_later_record)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  placeholders_of_a_brokerd_killed_after (home, cut_the_second_record);
  bx_placeholders_start (home);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, ".profile ");
  cleanup_free char *cmd = bx_xasprintf ("rm -f '%s/.profile' && rm -rf '%s'", root, home);
  ck_assert_int_eq (system (cmd), 0);
}
END_TEST

START_TEST (test_a_placeholder_still_mounted_is_left_for_the_next_start)
{
  /* A mount namespace of this test's own, where the placeholder is mounted: a sandbox of the
   * killed brokerd that still runs. */
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    BX_TEST_SKIP ("cannot make a mount namespace: %s", strerror (errno));
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  const char *subs[] = { ".git/hooks", ".bashrc" };
  placeholders_of_a_killed_brokerd (home, subs, 2);
  cleanup_free char *bashrc = bx_xasprintf ("%s/.bashrc", root);
  ck_assert_int_eq (mount (bashrc, bashrc, NULL, MS_BIND, NULL), 0);
  bx_placeholders_start (home);
  cleanup_free char *kept = listing ();
  ck_assert_str_eq (kept, ".bashrc ");
  cleanup_free char *one
      = bx_xasprintf ("test \"$(grep -c '^+ ' '%s'/placeholders/*/log)\" = 1", home);
  ck_assert_int_eq (system (one), 0);
  /* That sandbox gone, the next start removes it. */
  ck_assert_int_eq (umount2 (bashrc, 0), 0);
  bx_placeholders_start (home);
  cleanup_free char *after = listing ();
  ck_assert_str_eq (after, "");
  cleanup_free char *gone = bx_xasprintf ("%s/placeholders", home);
  struct stat st;
  ck_assert_int_eq (lstat (gone, &st), -1);
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

/* A placeholder that lives on while others come and go: the record file stays short, and
 * still names the one that lives. */
START_TEST (test_the_record_file_stays_short_under_overlapping_calls)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  bx_placeholders_start (home);
  const char *lasting[] = { ".bashrc" };
  struct bx_placeholder_refs held = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  free (protect_held (lasting, 1, &held, &rc, &detail));
  ck_assert_int_eq (rc, 0);
  const char *coming[] = { ".profile" };
  for (int i = 0; i < 2000; i++)
    {
      struct bx_placeholder_refs refs = { 0 };
      free (protect_held (coming, 1, &refs, &rc, &detail));
      ck_assert_int_eq (rc, 0);
      bx_placeholder_release (&refs);
    }
  /* 2,000 calls wrote about 300 kB of lines; the file was written again past 64 KiB. */
  cleanup_free char *small
      = bx_xasprintf ("test \"$(stat -c %%s '%s'/placeholders/*/log)\" -le 70000 && "
                      "grep -q '^+ f [0-9]* [0-9]* [0-9]* %s/.bashrc$' '%s'/placeholders/*/log",
                      home, root, home);
  ck_assert_int_eq (system (small), 0);
  bx_placeholder_release (&held);
  bx_placeholders_stop ();
  cleanup_free char *records = bx_xasprintf ("%s/placeholders", home);
  struct stat st;
  ck_assert_int_eq (lstat (records, &st), -1);
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

/* The folder of records is made with the first placeholder and kept, short, until brokerd
 * stops: making it again for each call cost more than the placeholders. */
START_TEST (test_records_live_until_brokerd_stops)
{
  cleanup_free char *home = bx_xasprintf ("%s-home", root);
  ck_assert_int_eq (mkdir (home, 0700), 0);
  bx_placeholders_start (home);
  cleanup_free char *records = bx_xasprintf ("%s/placeholders", home);
  struct stat st;
  ck_assert_int_eq (lstat (records, &st), -1);
  const char *subs[] = { ".bashrc" };
  struct bx_placeholder_refs refs = { 0 };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect_held (subs, 1, &refs, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".bashrc:ro\n");
  cleanup_free char *one
      = bx_xasprintf ("test \"$(grep -c '^+ ' '%s'/placeholders/*/log)\" = 1", home);
  ck_assert_int_eq (system (one), 0);
  bx_placeholder_release (&refs);
  /* Each line of a making has its line of a removal: a start after a kill has nothing to do. */
  cleanup_free char *balanced
      = bx_xasprintf ("test \"$(grep -c '^- ' '%s'/placeholders/*/log)\" = 1", home);
  ck_assert_int_eq (system (balanced), 0);
  /* Calls one after the other: the file starts again once it is long and nothing lives. */
  for (int i = 0; i < 2000; i++)
    {
      struct bx_placeholder_refs more = { 0 };
      free (protect_held (subs, 1, &more, &rc, &detail));
      ck_assert_int_eq (rc, 0);
      bx_placeholder_release (&more);
    }
  cleanup_free char *small
      = bx_xasprintf ("test \"$(stat -c %%s '%s'/placeholders/*/log)\" -le 70000", home);
  ck_assert_int_eq (system (small), 0);
  /* Nothing of it stays in the home once brokerd stops. */
  bx_placeholders_stop ();
  ck_assert_int_eq (lstat (records, &st), -1);
  ck_assert_int_eq (rmdir (home), 0);
}
END_TEST

START_TEST (test_a_git_file_is_protected_instead_of_what_it_names)
{
  /* A linked worktree's .git is a file naming the git folder: rewriting it would point git
   * at hooks the sandbox wrote. */
  make_file (".git");
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect (bx_protect_defaults, 2, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  ck_assert_str_eq (s, ".git:ro\n");
}
END_TEST

START_TEST (test_a_symbolic_link_on_the_way_refuses_the_call)
{
  static const struct
  {
    const char *dirs[2], *link_target, *link;
  } cases[] = {
    { { NULL, NULL }, "/etc", ".git" },
    { { ".git", NULL }, "/tmp", ".git/hooks" },
    { { ".git", NULL }, "../x", ".git/config" },
    { { NULL, NULL }, "nowhere", ".bashrc" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      teardown ();
      setup ();
      for (size_t k = 0; k < 2 && cases[i].dirs[k]; k++)
        make_dir (cases[i].dirs[k]);
      make_link (cases[i].link_target, cases[i].link);
      int rc;
      cleanup_error bx_error detail = NULL;
      cleanup_free char *s = protect (bx_protect_defaults, bx_protect_default_count, &rc, &detail);
      ck_assert_int_eq (rc, -1);
      /* Nothing is mounted for a call that does not run; what came before the link may be
       * listed, and the caller drops it all. */
      ck_assert_ptr_nonnull (s);
      cleanup_free char *want
          = bx_xasprintf ("the protected path %s/%s is a symbolic link", root, cases[i].link);
      ck_assert_str_eq (bx_error_msg (detail), want);
      /* What was made for the paths before the link went with the refusal. */
      if (cases[i].dirs[0] == NULL && strcmp (cases[i].link, ".git") != 0)
        {
          cleanup_free char *git = described (".git");
          ck_assert_str_eq (git, "missing");
        }
    }
}
END_TEST

START_TEST (test_a_path_listed_twice_or_inside_another_is_mounted_once_read_only)
{
  make_dir (".git");
  make_dir (".git/hooks");
  const char *subs[] = { ".git/hooks", ".git", ".git/hooks" };
  int rc;
  cleanup_error bx_error detail = NULL;
  cleanup_free char *s = protect (subs, 3, &rc, &detail);
  ck_assert_int_eq (rc, 0);
  /* .git was a folder on the way (rw), then listed itself: read-only wins. */
  ck_assert_str_eq (s, ".git:ro\n.git/hooks:ro\n");
}
END_TEST

START_TEST (test_a_missing_folder_protects_nothing)
{
  struct bx_protect_list list = { 0 };
  struct bx_placeholder_refs refs = { 0 };
  cleanup_error bx_error detail = NULL;
  cleanup_free char *missing = bx_xasprintf ("%s/not-there", root);
  ck_assert_int_eq (bx_protect_folder (missing, bx_protect_defaults, bx_protect_default_count,
                                       &list, &refs, &detail),
                    0);
  ck_assert_uint_eq (list.count, 0);
  ck_assert_uint_eq (refs.count, 0);
}
END_TEST

START_TEST (test_subpath_problems)
{
  static const struct
  {
    const char *sub;
    bool ok;
  } cases[] = {
    { ".git/hooks", true }, { ".bashrc", true }, { "a/b/c", true },    { "", false },
    { "/etc", false },      { "a/../b", false }, { "./a", false },     { "a/", false },
    { "a//b", false },      { "..", false },     { "a:b", false },     { "a,b", false },
    { "a\nb", false },      { "...", true },     { ".git/..x", true },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      cleanup_error bx_error why = NULL;
      ck_assert_msg ((bx_protect_subpath_check (cases[i].sub, &why) == 0) == cases[i].ok, "%s",
                     cases[i].sub);
    }
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_readonly_paths");
  TCase *tc = tcase_create ("protect");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_a_repository_gets_its_hooks_and_config_read_only_and_git_pinned);
  tcase_add_test (tc, test_a_folder_without_git_gets_placeholders_for_the_call);
  tcase_add_test (tc, test_a_repository_without_hooks_gets_a_hooks_placeholder);
  tcase_add_test (tc, test_a_deeper_missing_path_gets_a_file_for_its_first_missing_part);
  tcase_add_test (tc, test_two_calls_share_a_placeholder_and_the_last_removes_it);
  tcase_add_test (tc, test_a_placeholder_that_changed_is_left_in_place);
  tcase_add_test (tc, test_a_placeholder_left_by_a_killed_brokerd_is_swept_at_start);
  tcase_add_test (tc, test_a_name_still_held_by_a_killed_brokerd_is_swept_after_another_went);
  tcase_add_test (tc, test_records_live_until_brokerd_stops);
  tcase_add_test (tc, test_records_removed_while_brokerd_runs_are_made_again);
  tcase_add_test (tc, test_a_record_cut_short_hides_no_later_record);
  tcase_add_test (tc, test_the_record_file_stays_short_under_overlapping_calls);
  tcase_add_test (tc, test_a_git_file_is_protected_instead_of_what_it_names);
  tcase_add_test (tc, test_a_symbolic_link_on_the_way_refuses_the_call);
  tcase_add_test (tc, test_a_path_listed_twice_or_inside_another_is_mounted_once_read_only);
  tcase_add_test (tc, test_a_missing_folder_protects_nothing);
  tcase_add_test (tc, test_subpath_problems);
  suite_add_tcase (s, tc);
  /* A mount namespace of its own: the host may refuse one. */
  TCase *may = bx_test_case_may_skip (s, "mount_namespace");
  tcase_add_checked_fixture (may, setup, teardown);
  tcase_add_test (may, test_a_placeholder_still_mounted_is_left_for_the_next_start);
  return s;
}

BX_TEST_MAIN (make_suite)
