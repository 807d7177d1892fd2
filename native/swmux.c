/*
 * swmux: the session fast path's helper (docs/fast-path.md).
 *
 * Why it exists: bash alone cannot wait for new requests and for the exits of
 * its jobs at once (a CHLD trap does not run while `read` blocks), and Node
 * cannot watch a process exit it did not spawn nor drain "at most one pipe
 * size after the exit". This small program can, and it never runs user code:
 * one stuck command cannot wedge the session.
 *
 * Node talks to it over its stdin/stdout (a child pipe locally; any byte
 * stream later: `docker exec -i`, an ssh channel). It forks a bash launcher
 * that has sourced the session snapshot; the launcher forks one background
 * job per call (its own process group), and tells us the job's pid. We watch
 * the job with a pidfd; when it fires the job has exited, everything it wrote
 * is in its FIFO, and we drain at most one pipe size: a background child that
 * keeps writing cannot hold the call open or reach another call (each call
 * has a fresh FIFO, closed and unlinked here).
 *
 * State: the job dumps the session state into DIR/ID.s, ending with a line
 * "#OK status cwd" (or only "#SAME status" when the command cannot have
 * changed the state: nothing to commit, the cwd stays). The job exits with
 * that status; only a job without such a line (it `exec`ed, was killed, its
 * dump failed) makes us ask its launcher, the only process that can reap it
 * (`W`, answered by `E`): one fork per call, no waiter. When the dump is
 * complete, the call was not killed and the dump differs from the committed
 * state, we rename it over the snapshot (the atomic commit) and start a
 * fresh launcher from it. The snapshot file stays the durable truth: if
 * anyone else replaces it (the plain path), we notice on the next request
 * and restart too.
 *
 * Frames, both directions: type:u8 id:u32be len:u32be payload[len].
 *   Node -> swmux  'R' run: u8 hasStdin, u32be stdinLen, stdin, script
 *                  'K' kill: u8 signal    'Q' quit
 *   swmux -> Node  'H' launcher ready     'B' launcher restarting (not ready)
 *                  'S' job started: u32be pid
 *                  'O' output bytes
 *                  'X' exit: "STATUS COMMITTED KILLED STARTED GROUP CWD" (GROUP 1: the
 *                      job's process group still has a process; cwd %-encoded, may be empty)
 *
 * With -t (text mode), each frame travels as one line of base64 instead, both
 * ways: for channels that carry text only (Daytona's session commands).
 *
 * Usage: swmux [-t] SNAPSHOT WORKDIR -- LAUNCHER-ARGV...
 * (the private directory it makes under WORKDIR is appended to the argv).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MAXCALLS 512
#define READ_CHUNK (256 * 1024)
/* Consecutive launcher deaths before it said ready: then give up (Node falls back and restarts us later). */
#define MAX_FAILED_STARTS 3

#define MAXLAUNCHERS 64
/* Fewer free launcher slots than this: retired launchers stop waiting for their jobs (see retire_all). */
#define LAUNCHER_RESERVE 4

struct call {
  uint32_t id, gen;
  /* exited: its pidfd fired (output drained). waiting: `W` sent, its status is awaited.
   * reaped: 1 + the status, when the job became ours (its launcher died) and we reaped it. */
  int used, outfd, pidfd, killed, started, has_stdin, exited, waiting, reaped;
  pid_t pid;
};

/* The current launcher, and retired ones: after a state change the old
 * launcher takes no new calls but stays until it has reported the exit
 * status of every job it started (it is their parent: only it can `wait`
 * for them); then its control pipe is closed and it exits. */
#define FORGET_BATCH 16

struct launcher {
  int used, ready, retired, ctl, rep;
  uint32_t gen;
  pid_t pid;
  /* Finished jobs whose status the launcher still keeps: `F` lets it go, in batches. */
  pid_t forget[FORGET_BATCH];
  int nforget;
  char buf[8192];
  size_t len;
};

static struct call calls[MAXCALLS];
static struct launcher launchers[MAXLAUNCHERS];
static struct launcher *cur;
static uint32_t next_gen = 1;
static char dir[4096], snap[4096];
static char **launcher_argv;
static int failed_starts;
static char *state;
static size_t state_len;
static dev_t snap_dev;
static ino_t snap_ino;
/* With the inode: a filesystem that reuses inode numbers (ext4 under overlayfs,
 * a container's /tmp) can give two plain-path commits in a row the number we
 * loaded; the change time and size tell them apart. */
static struct timespec snap_ctim;
static off_t snap_size;

static void remember_snapshot(const struct stat *st) {
  snap_dev = st->st_dev;
  snap_ino = st->st_ino;
  snap_ctim = st->st_ctim;
  snap_size = st->st_size;
}

static void cleanup_dir(void) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
  }
  rmdir(dir);
}

static void quit(int code) {
  for (int i = 0; i < MAXLAUNCHERS; i++)
    if (launchers[i].used && launchers[i].pid > 0) kill(launchers[i].pid, SIGKILL);
  cleanup_dir();
  _exit(code);
}

static void wr_all(int fd, const void *b, size_t n) {
  const char *p = b;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd q = {fd, POLLOUT, 0};
        poll(&q, 1, -1);
        continue;
      }
      if (fd == 1) quit(0); /* Node is gone */
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Text mode (-t): every frame is one line of base64, both ways, for channels
 * that carry text only (Daytona's session commands). */
static int text_mode;
static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(const unsigned char *in, size_t n, char *out) {
  size_t o = 0, i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = B64[v >> 18 & 63], out[o++] = B64[v >> 12 & 63], out[o++] = B64[v >> 6 & 63], out[o++] = B64[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
    out[o++] = B64[v >> 18 & 63], out[o++] = B64[v >> 12 & 63];
    out[o++] = i + 1 < n ? B64[v >> 6 & 63] : '=';
    out[o++] = '=';
  }
  return o;
}

static void wr_all(int fd, const void *b, size_t n);

static void text_frame(const unsigned char *h, const void *b, uint32_t n) {
  static char *line;
  static size_t cap;
  size_t need = ((size_t)n + 9 + 2) / 3 * 4 + 1;
  if (need > cap) {
    free(line);
    line = malloc(cap = need);
    if (!line) quit(4);
  }
  unsigned char *raw = malloc((size_t)n + 9);
  if (!raw) quit(4);
  memcpy(raw, h, 9);
  if (n) memcpy(raw + 9, b, n);
  size_t o = b64_encode(raw, (size_t)n + 9, line);
  free(raw);
  line[o++] = '\n';
  wr_all(1, line, o);
}

static void frame(char t, uint32_t id, const void *b, uint32_t n) {
  unsigned char h[9] = {(unsigned char)t, id >> 24, id >> 16, id >> 8, id, n >> 24, n >> 16, n >> 8, n};
  if (text_mode) {
    text_frame(h, b, n);
    return;
  }
  struct iovec v[2] = {{h, 9}, {(void *)b, n}};
  ssize_t w;
  do w = writev(1, v, n ? 2 : 1);
  while (w < 0 && errno == EINTR);
  if (w < 0) quit(0);
  size_t done = (size_t)w;
  if (done < 9) {
    wr_all(1, h + done, 9 - done);
    done = 9;
  }
  if (done - 9 < n) wr_all(1, (const char *)b + (done - 9), n - (done - 9));
}

/* Text mode's input: lines read from fd 0, decoded into `dec`, read from there. */
static unsigned char *raw_in, *dec;
static size_t raw_len, raw_cap, dec_len, dec_off, dec_cap;

static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Decodes every complete line in raw_in onto dec; keeps a partial line. */
static void decode_lines(void) {
  size_t start = 0;
  for (size_t i = 0; i < raw_len; i++) {
    if (raw_in[i] != '\n') continue;
    if (dec_len + (i - start) + 3 > dec_cap) {
      if (dec_off > 0) {
        memmove(dec, dec + dec_off, dec_len - dec_off);
        dec_len -= dec_off;
        dec_off = 0;
      }
      while (dec_len + (i - start) + 3 > dec_cap) dec_cap = dec_cap ? dec_cap * 2 : 65536;
      dec = realloc(dec, dec_cap);
      if (!dec) quit(4);
    }
    uint32_t v = 0;
    int bits = 0;
    for (size_t j = start; j < i; j++) {
      int d = b64_value(raw_in[j]);
      if (d < 0) continue; /* '=' padding, '\r' */
      v = v << 6 | (uint32_t)d;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        dec[dec_len++] = (unsigned char)(v >> bits);
      }
    }
    start = i + 1;
  }
  memmove(raw_in, raw_in + start, raw_len - start);
  raw_len -= start;
}

/* One read from fd 0 into raw_in, then decode; -1 at EOF or error. */
static int fill_text(void) {
  if (raw_len == raw_cap) {
    raw_cap = raw_cap ? raw_cap * 2 : 65536;
    raw_in = realloc(raw_in, raw_cap);
    if (!raw_in) quit(4);
  }
  ssize_t r;
  do r = read(0, raw_in + raw_len, raw_cap - raw_len);
  while (r < 0 && errno == EINTR);
  if (r <= 0) return -1;
  raw_len += (size_t)r;
  decode_lines();
  return 0;
}

static int rd_all(int fd, void *b, size_t n);

/* Reads exactly n bytes of requests, in either mode; -1 when the stream ended. */
static int in_read(void *b, size_t n) {
  if (!text_mode) return rd_all(0, b, n);
  while (dec_len - dec_off < n)
    if (fill_text()) return -1;
  memcpy(b, dec + dec_off, n);
  dec_off += n;
  if (dec_off == dec_len) dec_off = dec_len = 0;
  return 0;
}

static int rd_all(int fd, void *b, size_t n) {
  char *p = b;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r == 0) return -1;
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static char *slurp_fd(int fd, size_t *len) {
  size_t cap = 65536, n = 0;
  char *b = malloc(cap + 1);
  for (;;) {
    if (n == cap) b = realloc(b, (cap *= 2) + 1);
    ssize_t r = read(fd, b + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  b[n] = 0;
  *len = n;
  return b;
}

static void path(char *out, uint32_t id, const char *ext) { snprintf(out, 4200, "%s/%u.%s", dir, id, ext); }

static struct launcher *launcher_of(uint32_t gen) {
  for (int i = 0; i < MAXLAUNCHERS; i++)
    if (launchers[i].used && launchers[i].gen == gen) return &launchers[i];
  return NULL;
}

static int calls_of(uint32_t gen) {
  int n = 0;
  for (int i = 0; i < MAXCALLS; i++)
    if (calls[i].used && calls[i].gen == gen) n++;
  return n;
}

/* The launcher keeps each job's exit status until it is waited for; a job
 * whose status came from its dump needs no answer, so these go in batches,
 * after the calls have ended. */
static void forget_job(uint32_t gen, pid_t pid) {
  struct launcher *l = launcher_of(gen);
  if (!l || l->ctl < 0 || pid <= 0) return;
  l->forget[l->nforget++] = pid;
  if (l->nforget < FORGET_BATCH) return;
  char line[16 * FORGET_BATCH + 4];
  size_t m = 1;
  line[0] = 'F';
  for (int i = 0; i < l->nforget; i++) m += (size_t)snprintf(line + m, sizeof line - m, " %d", (int)l->forget[i]);
  line[m++] = '\n';
  l->nforget = 0;
  wr_all(l->ctl, line, m);
}

/* A retired launcher with no call left to report on: closing its control pipe ends it. */
static void close_if_done(struct launcher *l) {
  if (l && l->retired && l->ctl >= 0 && calls_of(l->gen) == 0) {
    close(l->ctl);
    l->ctl = -1;
  }
}

static int write_file(const char *p, const char *b, size_t n) {
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  wr_all(fd, b, n);
  close(fd);
  return 0;
}

/* Loads the snapshot as it is now: the state the next launcher starts from. */
static void load_snapshot(void) {
  int fd = open(snap, O_RDONLY | O_CLOEXEC);
  free(state);
  state = NULL;
  state_len = 0;
  snap_dev = 0;
  snap_ino = 0;
  snap_size = -1;
  if (fd >= 0) {
    struct stat st;
    if (fstat(fd, &st) == 0) remember_snapshot(&st);
    state = slurp_fd(fd, &state_len);
    close(fd);
  }
  if (!state) state = calloc(1, 1);
}

/* Too many retired launchers still wait for long jobs: they stop waiting and
 * exit; those jobs' statuses then come from their dumps (finish). */
static void retire_all(void) {
  for (int i = 0; i < MAXLAUNCHERS; i++)
    if (launchers[i].used && launchers[i].retired && launchers[i].ctl >= 0) {
      close(launchers[i].ctl);
      launchers[i].ctl = -1;
    }
}

static void start_launcher(void) {
  struct launcher *l = NULL;
  int free_slots = 0;
  for (int i = 0; i < MAXLAUNCHERS; i++)
    if (!launchers[i].used) {
      if (!l) l = &launchers[i];
      free_slots++;
    }
  if (free_slots <= LAUNCHER_RESERVE) retire_all();
  if (!l) quit(4); /* sixty-four launchers exiting at once: something is wrong */
  /* A new file renamed into place, never rewritten in place: a launcher
   * started just before may still be reading the previous one. */
  char base[4200], next[4200];
  snprintf(base, sizeof base, "%s/base.sh", dir);
  snprintf(next, sizeof next, "%s/base.sh.next", dir);
  if (write_file(next, state, state_len) || rename(next, base)) quit(4);
  int c[2], r[2];
  if (pipe2(c, O_CLOEXEC) || pipe2(r, O_CLOEXEC)) quit(4);
  pid_t pid = fork();
  if (pid < 0) quit(4);
  if (pid == 0) {
    /* The launcher and every job start with default signals and no mask: a
     * job must die of SIGPIPE when its call's FIFO is gone. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    dup2(c[0], 0);
    dup2(r[1], 1);
    int n = open("/dev/null", O_WRONLY);
    if (n >= 0) dup2(n, 2);
    execvp(launcher_argv[0], launcher_argv);
    _exit(127);
  }
  close(c[0]);
  close(r[1]);
  memset(l, 0, sizeof *l);
  l->used = 1;
  l->ctl = c[1];
  l->rep = r[0];
  l->pid = pid;
  l->gen = next_gen++;
  cur = l;
}

/* A state change: the current launcher retires (it starts what it was sent and
 * reports their exits, then exits) and a fresh one starts. */
static void replace_launcher(void) {
  if (cur) {
    cur->retired = 1;
    close_if_done(cur);
  }
  cur = NULL;
  frame('B', 0, NULL, 0);
  start_launcher();
}

static void drain(struct call *k, size_t cap) {
  static char buf[READ_CHUNK];
  size_t got = 0;
  for (;;) {
    ssize_t r = read(k->outfd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    frame('O', k->id, buf, (uint32_t)r);
    got += (size_t)r;
    if (cap && got >= cap) break;
  }
}

/*
 * Whether a process other than the job itself is still in the job's group (a
 * background child: the session must end it at close). kill(-pgid, 0) alone
 * would also count the job's zombie, which its launcher reaps a moment
 * later. Whatever the job left behind in its group is ours now (we are the
 * subreaper): the topmost such process is one of our children. (A process
 * that joined the group back from a group of its own, below another of our
 * children, is not seen; the session's close sweep still finds it by mark.)
 */
static int group_left(pid_t pgid) {
  if (kill(-pgid, 0) != 0) return 0;
  char p[64];
  snprintf(p, sizeof p, "/proc/self/task/%d/children", (int)getpid());
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1; /* cannot tell: say yes, the session keeps the group */
  size_t n = 0;
  char *list = slurp_fd(fd, &n);
  close(fd);
  int left = 0;
  for (char *t = list, *end; *t && !left; t = end) {
    long c = strtol(t, &end, 10);
    if (end == t) break;
    if (c > 0 && c != pgid && getpgid((pid_t)c) == pgid) left = 1;
  }
  free(list);
  return left;
}

static int exit_status(int ws) { return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws); }

static void remove_files(uint32_t id) {
  const char *exts[] = {"s", "c", "i", "o"};
  char p[4200];
  for (int i = 0; i < 4; i++) {
    path(p, id, exts[i]);
    unlink(p);
  }
}

static void release(struct call *k) {
  if (k->outfd >= 0) close(k->outfd);
  if (k->pidfd >= 0) close(k->pidfd);
  remove_files(k->id);
  k->used = 0;
}

/* A line of s[0..n) that starts at `at`, or NULL. */
static const char *last_line(const char *s, size_t n, size_t *start) {
  if (n == 0 || s[n - 1] != '\n') return NULL;
  size_t i = n - 1;
  while (i > 0 && s[i - 1] != '\n') i--;
  *start = i;
  return s + i;
}

/*
 * The call's end, once its job has exited. Its status: what the dump's last
 * line records (the job exits with it), else what its launcher's `wait`
 * saw (`wstatus`; a command that `exec`ed, a job killed by a signal, a dump
 * that failed), asked for with `W` and passed in by the `E` report. -1:
 * no report yet: then it asks, and the call goes on until `E`.
 */
static void finish(struct call *k, int wstatus) {
  char sp[4200];
  path(sp, k->id, "s");
  int status = k->killed ? 128 + k->killed : wstatus >= 0 ? wstatus : 137, committed = 0, restart = 0;
  char cwd[4200] = "";
  int fd = open(sp, O_RDONLY | O_CLOEXEC);
  char *s = NULL;
  size_t n = 0, ok = 0;
  const char *after = NULL;
  int same = 0;
  if (fd >= 0) {
    s = slurp_fd(fd, &n);
    close(fd);
    /* "#OK STATUS CWD" ends a complete dump; "#SAME STATUS" replaces one for
     * a command that cannot have changed the state (the cwd stays, too). */
    const char *o = last_line(s, n, &ok);
    same = o && strncmp(o, "#SAME ", 6) == 0;
    char *end = NULL;
    long ec = 0;
    if (o && (same || strncmp(o, "#OK ", 4) == 0)) ec = strtol(o + (same ? 6 : 4), &end, 10);
    if (end && *end == (same ? '\n' : ' ')) {
      after = end;
      if (!k->killed && wstatus < 0) status = (int)ec;
    }
  }
  if (!after && !k->killed && wstatus < 0) {
    int ws;
    /* Its launcher died first: the job is ours now (we are the subreaper). */
    if (!k->reaped && k->pid > 0 && waitpid(k->pid, &ws, WNOHANG) == k->pid) k->reaped = 1 + exit_status(ws);
    struct launcher *l = launcher_of(k->gen);
    if (k->reaped) {
      wstatus = status = k->reaped - 1;
    } else if (!k->waiting && l && l->ctl >= 0) {
      char line[64];
      int m = snprintf(line, sizeof line, "W %u %d\n", k->id, (int)k->pid);
      wr_all(l->ctl, line, (size_t)m);
      k->waiting = 1;
      free(s);
      return;
    }
  }
  if (after && !k->killed) {
    if (!same) {
      size_t cl = (size_t)(s + n - 1 - (after + 1));
      if (cl >= sizeof cwd) cl = sizeof cwd - 1;
      memcpy(cwd, after + 1, cl);
      cwd[cl] = 0;
    }
    committed = 1;
    if (!same && (ok != state_len || memcmp(s, state, ok) != 0)) {
      /* The commit: one rename; the body (without the last line) becomes the state. */
      int tfd = open(sp, O_WRONLY | O_CLOEXEC);
      int cut = tfd >= 0 && ftruncate(tfd, (off_t)ok) == 0;
      if (tfd >= 0) close(tfd);
      if (cut && rename(sp, snap) == 0) {
        struct stat st;
        if (stat(snap, &st) == 0) remember_snapshot(&st);
        free(state);
        state = s;
        state_len = ok;
        s = NULL;
        restart = 1;
      } else {
        committed = 0;
      }
    }
  }
  free(s);
  int started = k->started, killed = k->killed ? 1 : 0, waited = wstatus >= 0;
  int group = k->pid > 0 && group_left(k->pid);
  uint32_t id = k->id, gen = k->gen;
  pid_t pid = k->pid;
  char st[4300];
  int m = snprintf(st, sizeof st, "%d %d %d %d %d %s", status, committed, killed, started, group, cwd);
  frame('X', id, st, (uint32_t)m);
  /* After the answer: removing the call's files is not on its way. */
  release(k);
  if (!waited) forget_job(gen, pid);
  close_if_done(launcher_of(gen));
  if (restart) replace_launcher();
}

/* The job has exited (its pidfd fired): what it wrote is in its FIFO, at
 * most a pipe size, drained now and never again (a background child that
 * keeps writing cannot hold the call open). */
static void job_exited(struct call *k) {
  int psz = fcntl(k->outfd, F_GETPIPE_SZ);
  drain(k, psz > 0 ? (size_t)psz : 65536);
  if (k->pidfd >= 0) close(k->pidfd);
  k->pidfd = -1;
  k->exited = 1;
  finish(k, -1);
}

/* Reaps our children: launchers, and (as the subreaper) jobs whose launcher
 * died and whatever else was orphaned below us. A job's status is kept. */
static void reap(void) {
  int ws;
  pid_t p;
  while ((p = waitpid(-1, &ws, WNOHANG)) > 0)
    for (int i = 0; i < MAXCALLS; i++)
      if (calls[i].used && calls[i].pid == p) calls[i].reaped = 1 + exit_status(ws);
}

static struct call *find(uint32_t id) {
  for (int i = 0; i < MAXCALLS; i++)
    if (calls[i].used && calls[i].id == id) return &calls[i];
  return NULL;
}

static void refuse(uint32_t id) { frame('X', id, "125 0 0 0 0 ", 12); }

/* Someone else replaced the snapshot (the plain path): the launcher is stale. */
static void check_snapshot(void) {
  struct stat st;
  if (stat(snap, &st) != 0) return;
  if (st.st_ino == snap_ino && st.st_dev == snap_dev && st.st_size == snap_size &&
      st.st_ctim.tv_sec == snap_ctim.tv_sec && st.st_ctim.tv_nsec == snap_ctim.tv_nsec)
    return;
  load_snapshot();
  replace_launcher();
}

static void on_request(void) {
  unsigned char h[9];
  if (in_read(h, 9)) quit(0);
  uint32_t id = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
  uint32_t len = (uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 8 | h[8];
  char *p = malloc((size_t)len + 1);
  if (!p || (len && in_read(p, len))) quit(0);
  if (h[0] == 'R') {
    struct call *k = NULL;
    for (int i = 0; i < MAXCALLS; i++)
      if (!calls[i].used) {
        k = &calls[i];
        break;
      }
    uint32_t sl = len >= 5 ? (uint32_t)(unsigned char)p[1] << 24 | (uint32_t)(unsigned char)p[2] << 16 |
                                 (uint32_t)(unsigned char)p[3] << 8 | (unsigned char)p[4]
                           : 0;
    if (!k || len < 5 || sl > len - 5) {
      refuse(id);
      free(p);
      return;
    }
    check_snapshot();
    char cp[4200], ip[4200], op[4200], sp[4200];
    path(cp, id, "c");
    path(ip, id, "i");
    path(op, id, "o");
    path(sp, id, "s");
    int has = p[0] ? 1 : 0;
    /* The dump file exists before the job, private: it becomes the snapshot (mode 0600) by a rename. */
    if ((has && write_file(ip, p + 5, sl)) || write_file(cp, p + 5 + sl, len - 5 - sl) || write_file(sp, "", 0)) {
      refuse(id);
      free(p);
      return;
    }
    /* A fresh FIFO per call, opened read-write and non-blocking before the
     * job exists: its open never blocks and no EOF is ever needed. */
    unlink(op);
    int ofd = mkfifo(op, 0600) == 0 ? open(op, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
    if (ofd < 0) {
      remove_files(id);
      refuse(id);
      free(p);
      return;
    }
    fcntl(ofd, F_SETPIPE_SZ, 1 << 20);
    memset(k, 0, sizeof *k);
    k->id = id;
    k->used = 1;
    k->outfd = ofd;
    k->pidfd = -1;
    k->has_stdin = has;
    k->gen = cur->gen;
    char line[64];
    int m = snprintf(line, sizeof line, "C %u %d\n", id, has);
    wr_all(cur->ctl, line, (size_t)m);
  } else if (h[0] == 'K') {
    struct call *k = find(id);
    int sig = len ? (unsigned char)p[0] : SIGKILL;
    if (k) {
      if (!k->killed || sig == SIGKILL) k->killed = sig;
      if (k->pid > 0) kill(-k->pid, sig);
    }
  } else if (h[0] == 'Q') {
    quit(0);
  }
  free(p);
}

/* A process's parent, from /proc; -1 when it is gone, 0 while it is being reaped. */
static pid_t parent_of(pid_t pid) {
  char p[64], b[512];
  snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return -1;
  b[n] = 0;
  char *r = strrchr(b, ')');
  int ppid = -1;
  char state;
  if (!r || sscanf(r + 1, " %c %d", &state, &ppid) != 2) return -1;
  return (pid_t)ppid;
}

/* `S` from launcher `l`. A command can write to its launcher's report pipe
 * (/proc/$$/fd/1): only a child of that launcher (or ours, once it died) is
 * taken as a call's job, never another process whose group we would signal. */
static void on_started(struct launcher *l, uint32_t id, pid_t pid) {
  struct call *k = find(id);
  if (!k || k->started || k->gen != l->gen || pid <= 1) return;
  pid_t parent = parent_of(pid);
  if (parent > 0 && parent != l->pid && parent != getpid()) return;
  k->pid = pid;
  k->started = 1;
  unsigned char b[4] = {pid >> 24, pid >> 16, pid >> 8, pid};
  frame('S', id, b, 4);
  if (k->killed) kill(-pid, k->killed);
  k->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (k->pidfd < 0) job_exited(k); /* already gone */
}

/* A launcher's report pipe ended: it exited (retired) or died (killed by a
 * command, OOM). Calls it certainly never started are answered "not started"
 * (Node runs them on the plain path), calls it may have started "maybe";
 * running jobs keep their pidfds. */
static void launcher_gone(struct launcher *l) {
  int was_ready = l->ready;
  uint32_t gen = l->gen;
  if (l->ctl >= 0) close(l->ctl);
  close(l->rep);
  l->used = 0;
  for (int i = 0; i < MAXCALLS; i++) {
    struct call *k = &calls[i];
    if (!k->used || k->gen != gen) continue;
    /* Its job exited, the status will not come: the dump's, if any. (A
     * running one is finished the same way when its pidfd fires.) */
    if (k->exited) finish(k, -1);
    if (!k->used || k->started || k->gen != gen) continue;
    uint32_t id = k->id;
    release(k);
    /* A ready launcher may have forked the job before dying without reporting
     * it: "2" (maybe started) is never run again; "0" (certainly not) is. */
    frame('X', id, was_ready ? "125 0 0 2 0 " : "125 0 0 0 0 ", 12);
  }
  /* Unless a commit above already replaced it (and maybe reused its slot). */
  if (cur != l || l->used) return;
  cur = NULL;
  frame('B', 0, NULL, 0);
  failed_starts = was_ready ? 0 : failed_starts + 1;
  if (failed_starts >= MAX_FAILED_STARTS) quit(3);
  start_launcher();
}

static void on_report(struct launcher *l) {
  ssize_t r = read(l->rep, l->buf + l->len, sizeof l->buf - l->len);
  if (r < 0 && errno == EINTR) return;
  if (r <= 0) {
    launcher_gone(l);
    return;
  }
  l->len += (size_t)r;
  char *nl;
  while ((nl = memchr(l->buf, '\n', l->len))) {
    *nl = 0;
    unsigned id;
    int pid;
    if (sscanf(l->buf, "S %u %d", &id, &pid) == 2 && pid > 0) {
      on_started(l, id, pid);
    } else if (sscanf(l->buf, "E %u %d", &id, &pid) == 2) {
      struct call *k = find(id);
      if (k && k->waiting) finish(k, pid);
    } else if (strcmp(l->buf, "H") == 0) {
      l->ready = 1;
      failed_starts = 0;
      if (l == cur) frame('H', 0, NULL, 0);
    }
    size_t used = (size_t)(nl - l->buf) + 1;
    memmove(l->buf, l->buf + used, l->len - used);
    l->len -= used;
  }
  if (l->len == sizeof l->buf) l->len = 0; /* a line this long is not ours */
}

static sigset_t unblocked;
static void on_chld(int sig) { (void)sig; }

static int stdin_ready(void) {
  if (text_mode && dec_len > dec_off) return 1;
  struct pollfd q = {0, POLLIN, 0};
  return poll(&q, 1, 0) > 0 && q.revents;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-t") == 0) {
    text_mode = 1;
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc < 5 || strcmp(argv[3], "--") != 0) {
    fprintf(stderr, "usage: swmux [-t] SNAPSHOT WORKDIR -- LAUNCHER-ARGV...\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  /* A job whose launcher died becomes our child, not init's: its exit status
   * (a command that `exec`ed records none in its dump) is still ours to read. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &unblocked);
  snprintf(snap, sizeof snap, "%s", argv[1]);
  snprintf(dir, sizeof dir, "%s/swmux.XXXXXX", argv[2]);
  if (!mkdtemp(dir)) {
    perror("swmux: mkdtemp");
    return 4;
  }
  /* Probe pidfd support now: without it (Linux < 5.3) there is no fast path. */
  int probe = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (probe < 0) {
    fprintf(stderr, "swmux: pidfd_open unavailable\n");
    cleanup_dir();
    return 5;
  }
  close(probe);
  int n = argc - 4;
  launcher_argv = calloc((size_t)n + 2, sizeof *launcher_argv);
  for (int i = 0; i < n; i++) launcher_argv[i] = argv[4 + i];
  launcher_argv[n] = dir;
  load_snapshot();
  start_launcher();
  for (;;) {
    struct pollfd f[MAXCALLS * 2 + MAXLAUNCHERS + 1];
    struct call *who[MAXCALLS * 2 + MAXLAUNCHERS + 1];
    uint32_t ids[MAXCALLS * 2 + MAXLAUNCHERS + 1];
    int nf = 0, nl = 0;
    struct launcher *lw[MAXLAUNCHERS];
    f[nf].fd = 0;
    f[nf].events = POLLIN;
    who[nf++] = NULL;
    for (int i = 0; i < MAXLAUNCHERS; i++)
      if (launchers[i].used) {
        lw[nl++] = &launchers[i];
        f[nf].fd = launchers[i].rep;
        f[nf].events = POLLIN;
        ids[nf] = launchers[i].gen;
        who[nf++] = NULL;
      }
    int first_call = nf;
    for (int i = 0; i < MAXCALLS; i++)
      if (calls[i].used && !calls[i].exited) {
        f[nf].fd = calls[i].outfd;
        f[nf].events = POLLIN;
        ids[nf] = calls[i].id;
        who[nf++] = &calls[i];
        if (calls[i].pidfd >= 0) {
          f[nf].fd = calls[i].pidfd;
          f[nf].events = POLLIN;
          ids[nf] = calls[i].id;
          who[nf++] = &calls[i];
        }
      }
    struct timespec now = {0, 0};
    /* SIGCHLD is blocked except inside ppoll: an orphan's exit wakes us to reap it (no zombie lingers). */
    int ready = ppoll(f, (nfds_t)nf, text_mode && dec_len > dec_off ? &now : NULL, &unblocked);
    if (ready < 0 && errno != EINTR) quit(4);
    reap();
    if (ready < 0) continue;
    /* Requests first, all of them: a kill Node sent before it signalled the
     * job must be seen before that job's exit (a killed call commits nothing). */
    if (f[0].revents || (text_mode && dec_len > dec_off)) do on_request();
      while (stdin_ready());
    for (int i = 0; i < nl; i++)
      if (f[1 + i].revents && lw[i]->used && lw[i]->gen == ids[1 + i]) on_report(lw[i]);
    for (int i = first_call; i < nf; i++) {
      struct call *k = who[i];
      /* The slot may have been finished and reused while this round ran. */
      if (!f[i].revents || !k->used || k->id != ids[i]) continue;
      if (f[i].fd == k->outfd) drain(k, 1 << 20);
      else if (f[i].fd == k->pidfd) {
        if (stdin_ready()) do on_request();
          while (stdin_ready());
        if (k->used && k->id == ids[i] && !k->exited) job_exited(k);
      }
    }
  }
}
