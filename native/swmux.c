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
 * stream elsewhere: `docker exec -i`, an ssh channel). It forks a bash
 * launcher that has sourced the session snapshot; the launcher forks one
 * background job per call (its own process group), and tells us the job's
 * pid. We watch the job with a pidfd; when it fires the job has exited,
 * everything it wrote is in its FIFO, and we drain at most one pipe size: a
 * background child that keeps writing cannot hold the call open or reach
 * another call (each call has a fresh FIFO, closed and unlinked here).
 *
 * State: the job dumps the session state into DIR/ID.s, a FIFO we read as it
 * comes (a pipe is never cut by the command's `ulimit -f`, nor by a full
 * disk), ending with a line "#OK status cwd" (or only "#SAME status" when
 * the command cannot have changed the state). The job exits with that status; only a job without
 * such a line (it `exec`ed, was killed, its dump failed) makes us ask its
 * launcher, the only process that can reap it (`W`, answered by `E`). When
 * the dump is complete, the call was not killed and the dump differs from the
 * committed state, we write it to a file and rename that over the snapshot (the atomic commit) and
 * start a fresh launcher from it. The snapshot file stays the durable truth:
 * if anyone else replaces it (the plain path), we notice on the next request
 * and restart too.
 *
 * Hostile commands (docs/guarantees.md). Jobs run as our grandchildren with
 * our uid: we are not dumpable (no /proc/PID/fd, no ptrace without
 * CAP_SYS_PTRACE), the channel to Node sits on close-on-exec descriptors no
 * job inherits, and every frame carries a sequence number and a tag keyed by
 * a secret Node sends first: a process that still reaches the channel cannot
 * forge, drop or reorder a frame unseen. Any frame that breaks the protocol
 * ends us with EXIT_PROTOCOL and a line on stderr; Node then drops the fast
 * path. We ignore the signals a command sends by habit (`kill $PPID`,
 * `kill -HUP 0`); a stopped launcher is continued at once (we are its parent
 * and see the stop), a traced one that leaves a request unanswered is
 * replaced. A stopped helper is Node's to continue: it stops answering pings.
 *
 * The wire format and its limits are defined once, in
 * src/backends/shared/fast-path/protocol.ts (protocol.h is generated from it).
 *
 * Usage: swmux [-t] [-v] SNAPSHOT WORKDIR -- LAUNCHER-ARGV...
 *   -t  text mode: every frame travels as one line of base64, both ways (for
 *       channels that carry text only: Daytona's session commands)
 *   -v  debug log on stderr (SHELLWRIGHT_FAST_PATH_DEBUG)
 *   -V  print the protocol version and exit
 * The private directory it makes under WORKDIR is appended to the argv.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"
#include "protocol.h"
#include "pty.h"
#include "sha256.h"
#include "swmux.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Consecutive launcher deaths before it said ready: then give up (Node falls back and restarts us later). */
#define MAX_FAILED_STARTS 3
#define MAX_LAUNCHERS 64
/* Fewer free launcher slots than this: retired launchers stop waiting for their jobs (see retire_all). */
#define LAUNCHER_RESERVE 4
/* Statuses a launcher keeps for us, let go in batches (`F`). */
#define FORGET_BATCH 16
/* A launcher's report line is at most this long; a longer one is not ours. */
#define REPORT_LINE_MAX 8192
/* A launcher in a tracer's stop that leaves a request unanswered this long is stuck: replaced. */
#define STUCK_LAUNCHER_MS 2000
/* One in any other state (a thief read its request) is stuck after this long: far beyond a fork on a loaded machine. */
#define SLOW_LAUNCHER_MS 30000
/* While a request is still arriving, `A` this often at most (Node gives up a helper silent for 10 s). */
#define ALIVE_EVERY_MS 250
/* A call's FIFOs (output, stderr apart, dump) are this size (the most an unprivileged process may ask), and one
 * round of the loop takes at most this much of one FIFO, so that one chatty call cannot starve the others. */
#define CALL_FIFO_BYTES (1 << 20)
/* The most of one dump we hold: a state this large is not saved (the call says so), the session goes on. */
#define MAX_DUMP_BYTES ((size_t)64 << 20)
/* A growing buffer's first size. */
#define CHUNK_BYTES 65536
/* A status for a process a signal ended, as a shell gives it: this plus the signal's number. */
#define SIGNAL_STATUS_BASE 128
/* The status of a launcher whose exec failed (as a shell's for a command it cannot run). */
#define STATUS_EXEC_FAILED 127
/* Every file and FIFO we make is ours alone. */
#define PRIVATE_MODE 0600
/* The channel's descriptors are moved at or above this one, out of the way of those a launcher is given. */
#define CHANNEL_FD_MIN 10
/* A path under our directory: DIR/ID.ext. */
#define CALL_PATH_MAX (PATH_MAX + 32)

enum call_state {
  CALL_FREE,
  CALL_SENT,    /* `C` went to its launcher; no start report yet */
  CALL_RUNNING, /* its job runs: pidfd and FIFO watched */
  CALL_WAITING, /* its job exited without a status in its dump: `W` sent, `E` awaited */
};

enum call_flag {
  CALL_ASKED = 1 << 0,     /* its job left no status: `W` went to its launcher */
  CALL_DUMP_OVER = 1 << 1, /* its dump passed MAX_DUMP_BYTES: the rest was dropped, nothing is saved */
};

struct call {
  enum call_state state;
  uint32_t id, gen;
  unsigned flags; /* enum call_flag */
  /* errfd: the call's stderr FIFO when it asked for stderr apart (RUN_FLAG_STDERR_APART), else -1. */
  int outfd, errfd, pidfd, dumpfd;
  /* The signal Node sent it (0: none). */
  int killed;
  /* What came through the dump FIFO so far. */
  char *dump;
  size_t dump_len, dump_cap;
  /* 1 + the status, when the job became ours (its launcher died) and we reaped it. */
  int reaped;
  pid_t pid;
  long long sent_ms;
  /* Drawn for this call's `C` line: its job's `S` must carry it (a forged one for a neighbour cannot). */
  unsigned long long token;
};

enum launcher_state {
  LAUNCHER_FREE,
  LAUNCHER_STARTING, /* forked, has not said `H` */
  LAUNCHER_READY,
  LAUNCHER_RETIRED, /* a state change replaced it: it reports its jobs, then exits */
};

/* The current launcher, and retired ones: after a state change the old
 * launcher takes no new calls but stays until it has reported the exit
 * status of every job it started (it is their parent: only it can `wait`
 * for them); then its control pipe is closed and it exits. */
struct launcher {
  enum launcher_state state;
  int was_ready, ctl, rep;
  uint32_t gen;
  pid_t pid;
  /* Finished jobs whose status the launcher still keeps: `F` lets it go, in batches. */
  pid_t forget[FORGET_BATCH];
  int nforget;
  char buf[REPORT_LINE_MAX];
  size_t len;
};

static struct call calls[MAX_CALLS];
static struct launcher launchers[MAX_LAUNCHERS];
static struct launcher *cur;
static uint32_t next_gen = 1;
static char dir[PATH_MAX], snap[PATH_MAX];
static char **launcher_argv;
static int failed_starts, verbose, text_mode;
/* The channel to Node, moved off 0 and 1 (close-on-exec, never inherited). */
static int chan_in = -1, chan_out = -1;
static struct hmac_key key;
static int have_key;
static uint32_t seq_in, seq_out;
static char *state;
static size_t state_len;
static dev_t snap_dev;
static ino_t snap_ino;
/* With the inode: a filesystem that reuses inode numbers (ext4 under overlayfs,
 * a container's /tmp) can give two plain-path commits in a row the number we
 * loaded; the change time and size tell them apart. */
static struct timespec snap_ctim;
static off_t snap_size;

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void debug(const char *fmt, ...) {
  if (!verbose) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "swmux[%d] %lld: ", (int)getpid(), now_ms());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void remember_snapshot(const struct stat *st) {
  snap_dev = st->st_dev;
  snap_ino = st->st_ino;
  snap_ctim = st->st_ctim;
  snap_size = st->st_size;
}

static void cleanup_dir(void) {
  if (!dir[0]) return;
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

static void __attribute__((noreturn)) quit(int code) {
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state != LAUNCHER_FREE && launchers[i].pid > 0) kill(launchers[i].pid, SIGKILL);
  cleanup_dir();
  _exit(code);
}

/* Ends the helper with a reason on stderr: Node keeps the last lines for its warning. */
void die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("swmux: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  quit(code);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die(EXIT_INTERNAL, "out of memory (%zu bytes)", n);
  return p;
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) die(EXIT_INTERNAL, "out of memory (%zu bytes)", n);
  return q;
}

/* 0 when all of it was written; -1 when a write failed (a full disk: the caller must not use a cut file). */
static int wr_all(int fd, const void *b, size_t n) {
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
      if (fd == chan_out) quit(EXIT_OK); /* Node is gone */
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

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

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
  p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The tag of a frame: over the direction, the header before the tag and (but for output) the payload. */
static void tag_of(unsigned char direction, const unsigned char *header, const void *payload, size_t n,
                   unsigned char out[TAG_BYTES]) {
  unsigned char d = direction;
  int output = header[0] == REP_OUTPUT || header[0] == REP_STDERR || header[0] == REP_PROC_OUTPUT ||
               header[0] == REP_PROC_STDERR;
  int tagged = !output || direction != FROM_HELPER;
  hmac_tag(&key, &d, 1, header, TAGGED_HEADER_BYTES, payload, tagged ? n : 0, out, TAG_BYTES);
}

static void text_frame(const unsigned char *h, const void *b, uint32_t n) {
  static char *line;
  static unsigned char *raw;
  static size_t cap;
  size_t total = (size_t)n + HEADER_BYTES, need = (total + 2) / 3 * 4 + 1;
  if (need > cap) {
    free(line);
    free(raw);
    line = xmalloc(cap = need);
    raw = xmalloc(need);
  }
  memcpy(raw, h, HEADER_BYTES);
  if (n) memcpy(raw + HEADER_BYTES, b, n);
  size_t o = b64_encode(raw, total, line);
  line[o++] = '\n';
  wr_all(chan_out, line, o);
}

void frame(char t, uint32_t id, const void *b, uint32_t n) {
  unsigned char h[HEADER_BYTES];
  h[0] = (unsigned char)t;
  put32(h + 1, id);
  put32(h + 5, n);
  put32(h + 9, seq_out++);
  tag_of(FROM_HELPER, h, b, n, h + TAGGED_HEADER_BYTES);
  if (text_mode) {
    text_frame(h, b, n);
    return;
  }
  struct iovec v[2] = {{h, HEADER_BYTES}, {(void *)b, n}};
  ssize_t w;
  do w = writev(chan_out, v, n ? 2 : 1);
  while (w < 0 && errno == EINTR);
  if (w < 0 && errno == EAGAIN) w = 0;
  if (w < 0) quit(EXIT_OK);
  size_t done = (size_t)w;
  if (done < HEADER_BYTES) {
    wr_all(chan_out, h + done, HEADER_BYTES - done);
    done = HEADER_BYTES;
  }
  if (done - HEADER_BYTES < n) wr_all(chan_out, (const char *)b + (done - HEADER_BYTES), n - (done - HEADER_BYTES));
}

/* A call's end (protocol.ts, EXIT_FIELD): status, EXIT_FLAG bits and STARTED, then its text (a cwd, or why the
 * state was not saved), left out when longer than any cwd the frame carries. */
static void answer(uint32_t id, int status, unsigned flags, int started, const char *text) {
  static unsigned char out[EXIT_TEXT_AT + MAX_CWD_BYTES];
  size_t n = strlen(text);
  if (n > MAX_CWD_BYTES) n = 0;
  out[EXIT_FIELD_STATUS] = (unsigned char)status;
  out[EXIT_FIELD_FLAGS] = (unsigned char)flags;
  out[EXIT_FIELD_STARTED] = (unsigned char)started;
  memcpy(out + EXIT_TEXT_AT, text, n);
  frame(REP_EXIT, id, out, (uint32_t)(EXIT_TEXT_AT + n));
}

/*
 * What Node sent, assembled without blocking: a frame cut anywhere (or one
 * stray byte a process wrote into the channel) never stops us from serving
 * the calls that run. In text mode, complete lines are decoded into it.
 */
static unsigned char *in_buf, *raw_in;
static size_t in_len, in_cap, raw_len, raw_cap;

static void in_reserve(size_t more) {
  if (in_len + more <= in_cap) return;
  while (in_len + more > in_cap) in_cap = in_cap ? in_cap * 2 : CHUNK_BYTES;
  in_buf = xrealloc(in_buf, in_cap);
}

static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Decodes every complete line in raw_in onto in_buf; keeps a partial line. */
static void decode_lines(void) {
  size_t start = 0;
  for (size_t i = 0; i < raw_len; i++) {
    if (raw_in[i] != '\n') continue;
    in_reserve((i - start) / 4 * 3 + 3);
    uint32_t v = 0;
    int bits = 0;
    for (size_t j = start; j < i; j++) {
      int d = b64_value(raw_in[j]);
      if (d < 0) {
        if (raw_in[j] == '=' || raw_in[j] == '\r') continue;
        die(EXIT_PROTOCOL, "protocol violation: a byte that is not base64 (0x%02x)", raw_in[j]);
      }
      v = v << 6 | (uint32_t)d;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        in_buf[in_len++] = (unsigned char)(v >> bits);
      }
    }
    start = i + 1;
  }
  memmove(raw_in, raw_in + start, raw_len - start);
  raw_len -= start;
}

/* One read of what is there; 0 when Node closed the channel. */
static int fill_input(void) {
  unsigned char *to;
  size_t room;
  if (text_mode) {
    if (raw_cap - raw_len < CHUNK_BYTES) raw_in = xrealloc(raw_in, raw_cap += CHUNK_BYTES + raw_cap);
    to = raw_in + raw_len;
    room = raw_cap - raw_len;
  } else {
    in_reserve(CHUNK_BYTES);
    to = in_buf + in_len;
    room = in_cap - in_len;
  }
  ssize_t r = read(chan_in, to, room);
  if (r < 0) return errno == EINTR || errno == EAGAIN ? 1 : 0;
  if (r == 0) return 0;
  if (text_mode) {
    raw_len += (size_t)r;
    decode_lines();
  } else {
    in_len += (size_t)r;
  }
  return 1;
}

static char *slurp_fd(int fd, size_t *len) {
  size_t cap = CHUNK_BYTES, n = 0;
  char *b = xmalloc(cap + 1);
  for (;;) {
    if (n == cap) b = xrealloc(b, (cap *= 2) + 1);
    ssize_t r = read(fd, b + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  b[n] = 0;
  *len = n;
  return b;
}

/* What the dump FIFO holds now (non-blocking), appended to the call's dump; up to `cap` bytes when cap is not 0. */
static void read_dump(struct call *k, size_t cap) {
  static char buf[CHUNK_BYTES];
  size_t got = 0;
  for (;;) {
    ssize_t r = read(k->dumpfd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (k->dump_len + (size_t)r > MAX_DUMP_BYTES) k->flags |= CALL_DUMP_OVER;
    if (!(k->flags & CALL_DUMP_OVER)) {
      if (k->dump_len + (size_t)r + 1 > k->dump_cap) {
        while (k->dump_len + (size_t)r + 1 > k->dump_cap) k->dump_cap = k->dump_cap ? k->dump_cap * 2 : CHUNK_BYTES;
        k->dump = xrealloc(k->dump, k->dump_cap);
      }
      memcpy(k->dump + k->dump_len, buf, (size_t)r);
      k->dump_len += (size_t)r;
      k->dump[k->dump_len] = 0;
    }
    if (cap && got >= cap) break;
  }
}

static void path(char *out, uint32_t id, const char *ext) { snprintf(out, CALL_PATH_MAX, "%s/%u.%s", dir, id, ext); }

static struct launcher *launcher_of(uint32_t gen) {
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state != LAUNCHER_FREE && launchers[i].gen == gen) return &launchers[i];
  return NULL;
}

static struct launcher *launcher_by_pid(pid_t pid) {
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state != LAUNCHER_FREE && launchers[i].pid == pid) return &launchers[i];
  return NULL;
}

static int calls_of(uint32_t gen) {
  int n = 0;
  for (int i = 0; i < MAX_CALLS; i++)
    if (calls[i].state != CALL_FREE && calls[i].gen == gen) n++;
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
  if (l && l->state == LAUNCHER_RETIRED && l->ctl >= 0 && calls_of(l->gen) == 0) {
    close(l->ctl);
    l->ctl = -1;
  }
}

static int write_file(const char *p, const char *b, size_t n) {
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, PRIVATE_MODE);
  if (fd < 0) return -1;
  int written = wr_all(fd, b, n);
  close(fd);
  return written;
}

/* A file that did not exist (never one a command put there, nor a link), with all of b, or -1. */
static int write_new_file(const char *p, const char *b, size_t n) {
  int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PRIVATE_MODE);
  if (fd < 0) return -1;
  int written = wr_all(fd, b, n);
  if (close(fd) != 0) written = -1;
  return written;
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
  if (!state) {
    state = xmalloc(1);
    state[0] = 0;
  }
}

/* Too many retired launchers still wait for long jobs: they stop waiting and
 * exit; those jobs' statuses then come from their dumps (finish). */
static void retire_all(void) {
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state == LAUNCHER_RETIRED && launchers[i].ctl >= 0) {
      close(launchers[i].ctl);
      launchers[i].ctl = -1;
    }
}

/*
 * The launcher's copy of the state at `next`: a hard link to the snapshot
 * file the state came from, while it is still that file (no byte written: a
 * state dir that filled up since cannot cut it, and a state change costs no
 * copy), else the bytes written out.
 */
static int place_state(const char *next, int *linked) {
  struct stat st;
  unlink(next);
  *linked = 0;
  if (snap_ino && link(snap, next) == 0) {
    if (stat(next, &st) == 0 && st.st_ino == snap_ino && st.st_dev == snap_dev && st.st_size == (off_t)state_len) {
      *linked = 1;
      return 0;
    }
    unlink(next); /* the snapshot was replaced meanwhile */
  }
  return write_file(next, state, state_len);
}

static void start_launcher(void) {
  struct launcher *l = NULL;
  int free_slots = 0;
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state == LAUNCHER_FREE) {
      if (!l) l = &launchers[i];
      free_slots++;
    }
  if (free_slots <= LAUNCHER_RESERVE) retire_all();
  if (!l) die(EXIT_INTERNAL, "%d launchers at once", MAX_LAUNCHERS);
  /* A new file renamed into place, never rewritten in place: a launcher
   * started just before may still be reading the previous one. */
  char base[CALL_PATH_MAX], next[CALL_PATH_MAX];
  snprintf(base, sizeof base, "%s/base.sh", dir);
  snprintf(next, sizeof next, "%s/base.sh.next", dir);
  int linked;
  if (place_state(next, &linked) || rename(next, base)) die(EXIT_INTERNAL, "writing %s: %s", base, strerror(errno));
  /* A link and a rename change the snapshot's change time: remembered again, or check_snapshot would take it
   * for a new snapshot. */
  struct stat st;
  if (linked && stat(base, &st) == 0 && st.st_ino == snap_ino && st.st_dev == snap_dev) remember_snapshot(&st);
  int c[2], r[2];
  if (pipe2(c, O_CLOEXEC) || pipe2(r, O_CLOEXEC)) die(EXIT_INTERNAL, "pipe: %s", strerror(errno));
  pid_t pid = fork();
  if (pid < 0) die(EXIT_INTERNAL, "fork: %s", strerror(errno));
  if (pid == 0) {
    /* The launcher and every job start with default signals and no mask: a
     * job must die of SIGPIPE when its call's FIFO is gone. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    /* Our death ends the launcher (its jobs are killed by Node's sweep). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(c[0], 0);
    dup2(r[1], 1);
    int n = open("/dev/null", O_WRONLY);
    if (n >= 0) dup2(n, 2);
    execvp(launcher_argv[0], launcher_argv);
    _exit(STATUS_EXEC_FAILED);
  }
  close(c[0]);
  close(r[1]);
  memset(l, 0, sizeof *l);
  l->state = LAUNCHER_STARTING;
  l->ctl = c[1];
  l->rep = r[0];
  l->pid = pid;
  l->gen = next_gen++;
  cur = l;
  debug("launcher %d (gen %u) started", (int)pid, l->gen);
}

/* A state change: the current launcher retires (it starts what it was sent and
 * reports their exits, then exits) and a fresh one starts. */
static void replace_launcher(void) {
  if (cur) {
    cur->state = LAUNCHER_RETIRED;
    close_if_done(cur);
  }
  cur = NULL;
  frame(REP_RESTARTING, 0, NULL, 0);
  start_launcher();
}

/* What the call's FIFO `fd` holds, up to `cap`, as frames of `type` (its stdout, or its stderr apart). */
static void drain_fd(struct call *k, int fd, char type, size_t cap) {
  static char buf[MAX_OUTPUT_FRAME];
  size_t got = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    frame(type, k->id, buf, (uint32_t)r);
    got += (size_t)r;
    if (cap && got >= cap) break;
  }
}

static void drain(struct call *k, size_t cap) {
  drain_fd(k, k->outfd, REP_OUTPUT, cap);
  if (k->errfd >= 0) drain_fd(k, k->errfd, REP_STDERR, cap);
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

static int exit_status(int ws) { return WIFEXITED(ws) ? WEXITSTATUS(ws) : SIGNAL_STATUS_BASE + WTERMSIG(ws); }

static void remove_files(uint32_t id) {
  const char *exts[] = {"s", "c", "i", "o", "e"};
  char p[CALL_PATH_MAX];
  for (int i = 0; i < 5; i++) {
    path(p, id, exts[i]);
    unlink(p);
  }
}

/* A call's stdin and script: what a command was given (a password for `read -s`) leaves the disk as soon as
 * its job holds them open, and before the call's answer at the latest. */
static void remove_inputs(uint32_t id) {
  char p[CALL_PATH_MAX];
  path(p, id, "i");
  unlink(p);
  path(p, id, "c");
  unlink(p);
}

static void release(struct call *k) {
  if (k->outfd >= 0) close(k->outfd);
  if (k->errfd >= 0) close(k->errfd);
  if (k->pidfd >= 0) close(k->pidfd);
  if (k->dumpfd >= 0) close(k->dumpfd);
  free(k->dump);
  k->dump = NULL;
  remove_files(k->id);
  k->state = CALL_FREE;
}

/* The last line of s[0..n), or NULL when s does not end with a newline. */
static const char *last_line(const char *s, size_t n, size_t *start) {
  if (n == 0 || s[n - 1] != '\n') return NULL;
  size_t i = n - 1;
  while (i > 0 && s[i - 1] != '\n') i--;
  *start = i;
  return s + i;
}

/* What a dump's end says (parse_dump). */
struct dump_end {
  /* Where the text after the status starts (the cwd, or WHY for a failed dump); NULL: no valid end line. */
  const char *after;
  /* The length of the body: the dump without its last line (the state to commit). */
  size_t body;
  int same, failed;
  long status;
};

#define STARTS_WITH(s, lit) (strncmp((s), (lit), sizeof(lit) - 1) == 0)

/* "#OK STATUS CWD" ends a complete dump; "#SAME STATUS" replaces one for a command that cannot have changed the
 * state (the cwd stays, too). "#F STATUS WHY": the dump failed (at the start when its FIFO could not be opened,
 * else after what it got to); WHY goes to Node in the cwd field, uncommitted. */
static void parse_dump(const char *s, size_t n, struct dump_end *d) {
  memset(d, 0, sizeof *d);
  if (n == 0) return;
  const char *o = last_line(s, n, &d->body);
  d->failed = n > 3 && STARTS_WITH(s, "#F ") && memchr(s, '\n', n);
  if (d->failed) o = s;
  else if (o && !STARTS_WITH(o, "#OK ") && !STARTS_WITH(o, "#SAME ") && (o = strstr(o, "#F "))) d->failed = 1;
  d->same = !d->failed && o && STARTS_WITH(o, "#SAME ");
  if (!o || !(d->failed || d->same || STARTS_WITH(o, "#OK "))) return;
  char *end = NULL;
  d->status = strtol(o + (d->failed ? sizeof "#F " : d->same ? sizeof "#SAME " : sizeof "#OK ") - 1, &end, 10);
  if (end && *end == (d->same ? '\n' : ' ')) d->after = end;
}

/* Copies the text from after+1 up to `stop` into cwd, its `%25` and `%0A` decoded (the dump's end line is one
 * line; the exit frame carries raw bytes). None when it is longer than any cwd we carry: Node keeps the one it knew. */
static void copy_field(char *cwd, size_t cap, const char *after, const char *stop) {
  size_t n = 0;
  const char *c = after + 1;
  for (; c < stop && n + 1 < cap; c++) {
    int escaped = stop - c >= 3 && (STARTS_WITH(c, "%25") || STARTS_WITH(c, "%0A"));
    cwd[n++] = escaped ? (c[1] == '2' ? '%' : '\n') : *c;
    if (escaped) c += 2;
  }
  cwd[c < stop ? 0 : n] = 0;
}

/* The commit of a complete dump that differs from the state: its body written to a new file in the FIFO's place,
 * then one rename over the snapshot. 1: committed, the launcher must be replaced; 0: not saved, and cwd says why. */
static int commit_dump(struct call *k, size_t body, char *cwd) {
  char sp[CALL_PATH_MAX];
  path(sp, k->id, "s");
  unlink(sp);
  int written = write_new_file(sp, k->dump, body) == 0;
  if (written && rename(sp, snap) == 0) {
    struct stat st;
    if (stat(snap, &st) == 0) remember_snapshot(&st);
    free(state);
    state = k->dump;
    state_len = body;
    k->dump = NULL;
    return 1;
  }
  unlink(sp);
  strcpy(cwd, written ? "rename" : "write");
  return 0;
}

/* A job that left no status: its status is what we reaped (its launcher died: the job became ours), else we ask
 * its launcher (`W`). 1: asked, the call waits for `E`. */
static int ask_status(struct call *k, int *status) {
  int ws;
  if (!k->reaped && k->pid > 0 && waitpid(k->pid, &ws, WNOHANG) == k->pid) k->reaped = 1 + exit_status(ws);
  struct launcher *l = launcher_of(k->gen);
  if (k->reaped) {
    *status = k->reaped - 1;
    return 0;
  }
  if ((k->flags & CALL_ASKED) || !l || l->ctl < 0) return 0;
  char line[64];
  int m = snprintf(line, sizeof line, "W %u %d\n", k->id, (int)k->pid);
  wr_all(l->ctl, line, (size_t)m);
  k->flags |= CALL_ASKED;
  return 1;
}

/*
 * The call's end, once its job has exited. Its status: what the dump's last
 * line records (the job exits with it), else what its launcher's `wait`
 * saw (`wstatus`; a command that `exec`ed, a job killed by a signal, a dump
 * that failed), asked for with `W` and passed in by the `E` report. -1:
 * no report yet: then it asks, and the call goes on until `E`.
 */
static void finish(struct call *k, int wstatus) {
  int status = k->killed ? SIGNAL_STATUS_BASE + k->killed : wstatus >= 0 ? wstatus : SIGNAL_STATUS_BASE + SIGKILL;
  int committed = 0, restart = 0, waited = wstatus >= 0;
  static char cwd[MAX_CWD_BYTES + 1];
  cwd[0] = 0;
  /* The call's own buffer: it stays there while a `W` is answered, and becomes the state on a commit. */
  const char *s = k->flags & CALL_DUMP_OVER ? NULL : k->dump;
  size_t n = s ? k->dump_len : 0;
  struct dump_end d;
  parse_dump(s, n, &d);
  if (d.after && !k->killed && !waited) status = (int)d.status;
  if (!d.after && !k->killed && !waited) {
    if (ask_status(k, &status)) return;
    waited = k->reaped != 0;
  }
  if (d.after && !k->killed && d.failed) {
    copy_field(cwd, sizeof cwd, d.after, memchr(d.after, '\n', (size_t)(s + n - d.after)));
  } else if (d.after && !k->killed) {
    if (!d.same) copy_field(cwd, sizeof cwd, d.after, s + n - 1);
    committed = 1;
    if (!d.same && (d.body != state_len || memcmp(s, state, d.body) != 0))
      committed = restart = commit_dump(k, d.body, cwd);
  }
  /* A dump over MAX_DUMP_BYTES: not "nothing changed" but "could not be saved". */
  if (!d.after && !k->killed && (k->flags & CALL_DUMP_OVER)) strcpy(cwd, "size");
  int group = k->pid > 0 && group_left(k->pid);
  remove_inputs(k->id);
  uint32_t id = k->id, gen = k->gen;
  pid_t pid = k->pid;
  unsigned flags =
      (committed ? EXIT_FLAG_COMMITTED : 0) | (k->killed ? EXIT_FLAG_KILLED : 0) | (group ? EXIT_FLAG_GROUP_LEFT : 0);
  answer(id, status, flags, pid > 0 ? STARTED_YES : STARTED_NO, cwd);
  debug("call %u ended: status %d committed %d", id, status, committed);
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
  drain(k, psz > 0 ? (size_t)psz : CHUNK_BYTES); /* the stderr FIFO, when apart, has the same size */
  /* The dump was written before the job exited: all of it is in the FIFO now, and a pipe size is all we take
   * (a background child that holds the FIFO open and writes on cannot make us read for ever). */
  read_dump(k, (size_t)CALL_FIFO_BYTES);
  if (k->pidfd >= 0) close(k->pidfd);
  k->pidfd = -1;
  k->state = CALL_WAITING;
  finish(k, -1);
}

/* Reaps our children: launchers, and (as the subreaper) jobs whose launcher
 * died and whatever else was orphaned below us. A job's status is kept. A
 * launcher a command stopped (`kill -STOP $$`) is continued at once. */
static void reap(void) {
  int ws;
  pid_t p;
  while ((p = waitpid(-1, &ws, WNOHANG | WUNTRACED)) > 0) {
    if (WIFSTOPPED(ws)) {
      if (launcher_by_pid(p)) {
        debug("launcher %d was stopped (signal %d): continued", (int)p, WSTOPSIG(ws));
        kill(p, SIGCONT);
      }
      continue;
    }
    for (int i = 0; i < MAX_CALLS; i++)
      if (calls[i].state != CALL_FREE && calls[i].pid == p) calls[i].reaped = 1 + exit_status(ws);
  }
}

static struct call *find(uint32_t id) {
  for (int i = 0; i < MAX_CALLS; i++)
    if (calls[i].state != CALL_FREE && calls[i].id == id) return &calls[i];
  return NULL;
}

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

/* A fresh FIFO for one of a call's streams (ext), opened read-write and non-blocking before the job exists: its
 * open never blocks and no EOF is ever needed. -1 when it could not be made. */
static int call_fifo(uint32_t id, const char *ext) {
  char p[CALL_PATH_MAX];
  path(p, id, ext);
  unlink(p);
  int fd = mkfifo(p, PRIVATE_MODE) == 0 ? open(p, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
  if (fd >= 0) fcntl(fd, F_SETPIPE_SZ, CALL_FIFO_BYTES);
  return fd;
}

/* The files a call's job opens: its stdin and script (a stdin or script cut short by a full disk must not run),
 * and its FIFOs: output, stderr when apart, and the dump, read as the job writes it (a pipe's size is no file's,
 * so neither the command's `ulimit -f` nor a disk it filled can cut the dump short; we write the file on a
 * commit). 0, or -1 with nothing left open. */
static int make_call_files(struct call *k, const unsigned char *p, uint32_t len, int flags) {
  char cp[CALL_PATH_MAX], ip[CALL_PATH_MAX];
  path(cp, k->id, "c");
  path(ip, k->id, "i");
  uint32_t sl = get32(p + 1);
  const char *body = (const char *)p + 5;
  if (((flags & RUN_FLAG_STDIN) && write_file(ip, body, sl)) || write_file(cp, body + sl, len - 5 - sl)) return -1;
  k->dumpfd = call_fifo(k->id, "s");
  k->outfd = call_fifo(k->id, "o");
  k->errfd = flags & RUN_FLAG_STDERR_APART ? call_fifo(k->id, "e") : -1;
  if (k->dumpfd >= 0 && k->outfd >= 0 && (k->errfd >= 0 || !(flags & RUN_FLAG_STDERR_APART))) return 0;
  if (k->dumpfd >= 0) close(k->dumpfd);
  if (k->outfd >= 0) close(k->outfd);
  if (k->errfd >= 0) close(k->errfd);
  return -1;
}

static void on_run(uint32_t id, const unsigned char *p, uint32_t len) {
  if (find(id)) die(EXIT_PROTOCOL, "protocol violation: call %u is already running", id);
  struct call *k = NULL;
  for (int i = 0; i < MAX_CALLS && !k; i++)
    if (calls[i].state == CALL_FREE) k = &calls[i];
  uint32_t sl = get32(p + 1);
  if (sl > len - 5)
    die(EXIT_PROTOCOL, "protocol violation: call %u's stdin (%u bytes) is longer than its frame", id, sl);
  /* Not started, said so: Node runs it on the plain path. */
  if (!k) {
    answer(id, NOT_STARTED_STATUS, 0, STARTED_NO, "");
    return;
  }
  check_snapshot();
  int flags = p[0] & (RUN_FLAG_STDIN | RUN_FLAG_STDERR_APART);
  memset(k, 0, sizeof *k);
  k->id = id;
  if (make_call_files(k, p, len, flags)) {
    remove_files(id);
    answer(id, NOT_STARTED_STATUS, 0, STARTED_NO, "");
    return;
  }
  k->state = CALL_SENT;
  k->pidfd = -1;
  k->gen = cur->gen;
  k->sent_ms = now_ms();
  if (getrandom(&k->token, sizeof k->token, 0) != (ssize_t)sizeof k->token)
    die(EXIT_INTERNAL, "getrandom: %s", strerror(errno));
  char line[64];
  /* The launcher reads the same flag bits (buildLauncherScript). */
  int m = snprintf(line, sizeof line, "C %u %d %016llx\n", id, flags, k->token);
  wr_all(cur->ctl, line, (size_t)m);
  debug("call %u sent to launcher %d", id, (int)cur->pid);
}

static void on_kill(uint32_t id, int sig) {
  struct call *k = find(id);
  if (!k) return; /* it ended meanwhile */
  if (!k->killed || sig == SIGKILL) k->killed = sig;
  if (k->pid > 0) {
    kill(-k->pid, sig);
    /* A stopped job (`suspend`, `kill -STOP $BASHPID`) acts on the signal only once continued. */
    if (sig != SIGKILL) kill(-k->pid, SIGCONT);
  }
  debug("call %u: signal %d", id, sig);
}

/* One whole, checked request. */
static void dispatch(unsigned char type, uint32_t id, const unsigned char *p, uint32_t len) {
  switch (type) {
  case REQ_RUN:
    on_run(id, p, len);
    break;
  case REQ_KILL:
    on_kill(id, p[0]);
    break;
  case REQ_PING:
    frame(REP_PONG, id, NULL, 0);
    break;
  case REQ_QUIT:
    quit(EXIT_OK);
    break;
  case REQ_ATTACH:
    procs_attach(id, p, len);
    break;
  case REQ_INPUT:
    procs_input(id, p, len);
    break;
  case REQ_DETACH:
    procs_detach(id);
    break;
  default: /* take_frames refused every other type (request_bounds) */
    break;
  }
}

/* Takes every complete frame from the input: the key first, then requests, each checked before it acts. */
static void take_frames(void) {
  size_t off = 0;
  if (!have_key) {
    if (in_len < KEY_BYTES) return;
    hmac_key_init(&key, in_buf, KEY_BYTES);
    have_key = 1;
    off = KEY_BYTES;
  }
  /* Until the launcher runs (wait_for_key) there is nobody to hand a request to. */
  while (cur && in_len - off >= HEADER_BYTES) {
    const unsigned char *h = in_buf + off;
    uint32_t id = get32(h + 1), len = get32(h + 5), seq = get32(h + 9);
    unsigned long min, max;
    if (!request_bounds(h[0], &min, &max)) die(EXIT_PROTOCOL, "protocol violation: unknown frame type 0x%02x", h[0]);
    if (len < min || len > max)
      die(EXIT_PROTOCOL, "protocol violation: a '%c' frame of %u bytes (%lu to %lu allowed)", h[0], len, min, max);
    if (seq != seq_in) die(EXIT_PROTOCOL, "protocol violation: frame %u where %u was due", seq, seq_in);
    if (in_len - off - HEADER_BYTES < len) break;
    unsigned char tag[TAG_BYTES];
    tag_of(TO_HELPER, h, h + HEADER_BYTES, len, tag);
    unsigned char diff = 0;
    for (int i = 0; i < TAG_BYTES; i++) diff |= (unsigned char)(tag[i] ^ h[TAGGED_HEADER_BYTES + i]);
    if (diff) die(EXIT_PROTOCOL, "protocol violation: frame %u has a wrong tag", seq);
    seq_in++;
    off += HEADER_BYTES + len;
    dispatch(h[0], id, h + HEADER_BYTES, len);
  }
  if (off) {
    memmove(in_buf, in_buf + off, in_len - off);
    in_len -= off;
  }
}

/*
 * Everything Node has sent so far, read and acted on. While a request is
 * still arriving (a big stdin on a loaded machine takes seconds) we say we
 * are alive now and then: Node counts our silence, and a ping it sends would
 * wait behind the rest of that request.
 */
static void serve_requests(void) {
  static long long last_alive;
  for (;;) {
    struct pollfd q = {chan_in, POLLIN, 0};
    if (poll(&q, 1, 0) <= 0 || !q.revents) return;
    if (!fill_input()) quit(EXIT_OK); /* Node closed the channel */
    take_frames();
    if (have_key && (in_len > 0 || raw_len > 0)) {
      long long t = now_ms();
      if (t - last_alive >= ALIVE_EVERY_MS) {
        frame(REP_ALIVE, 0, NULL, 0);
        last_alive = t;
      }
    }
  }
}

/* The key comes first, before any frame of ours: a frame tagged before it
 * arrived (the launcher can be ready sooner, a remote channel is slow) would
 * carry a tag Node cannot check. */
static void wait_for_key(void) {
  while (!have_key) {
    struct pollfd q = {chan_in, POLLIN, 0};
    if (poll(&q, 1, -1) < 0) {
      if (errno == EINTR) continue;
      die(EXIT_INTERNAL, "poll: %s", strerror(errno));
    }
    if (!fill_input()) quit(EXIT_OK);
    take_frames();
  }
}

/* A process's state letter (ps's STAT) and parent, from /proc/PID/stat; 0 when unknown (no /proc, gone). */
static char proc_stat(pid_t pid, pid_t *parent) {
  char p[64], b[512];
  snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return 0;
  b[n] = 0;
  /* The name in parentheses may hold anything, ')' included: the last one ends it. */
  char *r = strrchr(b, ')');
  int ppid = -1;
  char st;
  if (!r || sscanf(r + 1, " %c %d", &st, &ppid) != 2) return 0;
  if (parent) *parent = (pid_t)ppid;
  return st;
}

/* A process's parent; -1 when it is gone, 0 while it is being reaped. */
pid_t parent_of(pid_t pid) {
  pid_t parent = -1;
  return proc_stat(pid, &parent) ? parent : -1;
}

/* `S` from launcher `l`. A command can write to its launcher's report pipe
 * (/proc/$$/fd/1): only a line with the call's token (which only its own job
 * was forked with) from a child of that launcher (or ours, once it died) is
 * taken as a call's job, never another process whose group we would signal,
 * nor another job claiming a neighbour's call. */
static void on_started(struct launcher *l, uint32_t id, pid_t pid, unsigned long long token) {
  struct call *k = find(id);
  if (!k || k->state != CALL_SENT || k->gen != l->gen || pid <= 1 || token != k->token) return;
  pid_t parent = parent_of(pid);
  if (parent > 0 && parent != l->pid && parent != getpid()) return;
  k->pid = pid;
  k->state = CALL_RUNNING;
  /* The job opened both before it reported (buildLauncherScript). */
  remove_inputs(id);
  unsigned char b[4];
  put32(b, (uint32_t)pid);
  frame(REP_STARTED, id, b, 4);
  if (k->killed) on_kill(id, k->killed);
  k->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (k->pidfd < 0) job_exited(k); /* already gone */
}

/* A launcher's report pipe ended: it exited (retired) or died (killed by a
 * command, OOM, or by us when it was stuck). Calls it certainly never started
 * are answered "not started" (Node runs them on the plain path), calls it may
 * have started "maybe"; running jobs keep their pidfds. */
static void launcher_gone(struct launcher *l) {
  int was_ready = l->was_ready;
  uint32_t gen = l->gen;
  debug("launcher %d (gen %u) gone", (int)l->pid, gen);
  if (l->ctl >= 0) close(l->ctl);
  close(l->rep);
  l->state = LAUNCHER_FREE;
  for (int i = 0; i < MAX_CALLS; i++) {
    struct call *k = &calls[i];
    if (k->state == CALL_FREE || k->gen != gen) continue;
    /* Its job exited, the status will not come: the dump's, if any. (A
     * running one is finished the same way when its pidfd fires.) */
    if (k->state == CALL_WAITING) finish(k, -1);
    if (k->state != CALL_SENT || k->gen != gen) continue;
    uint32_t id = k->id;
    release(k);
    /* A ready launcher may have forked the job before dying without reporting
     * it: "2" (maybe started) is never run again; "0" (certainly not) is. */
    answer(id, NOT_STARTED_STATUS, 0, was_ready ? STARTED_MAYBE : STARTED_NO, "");
  }
  /* Unless a commit above already replaced it (and maybe reused its slot). */
  if (cur != l || l->state != LAUNCHER_FREE) return;
  cur = NULL;
  frame(REP_RESTARTING, 0, NULL, 0);
  failed_starts = was_ready ? 0 : failed_starts + 1;
  if (failed_starts >= MAX_FAILED_STARTS)
    die(EXIT_LAUNCHER_FAILED, "the launcher died %d times before it was ready", failed_starts);
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
    unsigned long long token;
    if (sscanf(l->buf, "S %u %d %llx", &id, &pid, &token) == 3 && pid > 0) {
      on_started(l, id, pid, token);
    } else if (sscanf(l->buf, "E %u %d", &id, &pid) == 2) {
      struct call *k = find(id);
      if (k && k->state == CALL_WAITING && (k->flags & CALL_ASKED) && k->gen == l->gen) finish(k, pid);
    } else if (strcmp(l->buf, "H") == 0 && l->state == LAUNCHER_STARTING) {
      l->state = LAUNCHER_READY;
      l->was_ready = 1;
      failed_starts = 0;
      /* The calls sent while it started wait from now on. */
      long long t = now_ms();
      for (int i = 0; i < MAX_CALLS; i++)
        if (calls[i].state == CALL_SENT && calls[i].gen == l->gen) calls[i].sent_ms = t;
      if (l == cur) frame(REP_READY, 0, NULL, 0);
    }
    size_t used = (size_t)(nl - l->buf) + 1;
    memmove(l->buf, l->buf + used, l->len - used);
    l->len -= used;
  }
  if (l->len == sizeof l->buf) l->len = 0; /* a line this long is not ours */
}

/* A ready launcher that leaves a request unanswered is stuck when it sits in
 * a tracer's stop (ptrace: SIGCONT does not free it) or has not answered for
 * far longer than any fork takes. A launcher that is only slow (a loaded
 * machine: runnable, or in the kernel) is not: killing it would answer its
 * calls "maybe ran" for nothing. A call Node already stopped (its timeout)
 * does not wait for a slow launcher either. A stuck launcher is killed and
 * its calls are answered as any dead launcher's are. Returns how long until
 * the next such check (-1: none). */
static int check_stuck(void) {
  long long t = now_ms(), next = -1;
  for (int i = 0; i < MAX_CALLS; i++) {
    struct call *k = &calls[i];
    if (k->state != CALL_SENT) continue;
    struct launcher *l = launcher_of(k->gen);
    if (!l || l->state == LAUNCHER_STARTING) continue;
    long long left = k->sent_ms + STUCK_LAUNCHER_MS - t;
    if (left <= 0) {
      char st = proc_stat(l->pid, NULL);
      int halted = st == 't' || st == 'T';
      if (halted || k->killed || t - k->sent_ms >= SLOW_LAUNCHER_MS) {
        debug("launcher %d (state %c) left call %u unanswered %lld ms: killed", (int)l->pid, st ? st : '?', k->id,
              t - k->sent_ms);
        kill(l->pid, SIGKILL);
        k->sent_ms = t; /* its report pipe's end answers the call */
      }
      left = STUCK_LAUNCHER_MS;
    }
    if (next < 0 || left < next) next = left;
  }
  return (int)next;
}

static void on_chld(int sig) { (void)sig; }

/* The channel moves off 0 and 1 to descriptors no child inherits; 0 and 1 become /dev/null. */
static void move_channel(void) {
  chan_in = fcntl(0, F_DUPFD_CLOEXEC, CHANNEL_FD_MIN);
  chan_out = fcntl(1, F_DUPFD_CLOEXEC, CHANNEL_FD_MIN);
  if (chan_in < 0 || chan_out < 0) die(EXIT_INTERNAL, "moving the channel: %s", strerror(errno));
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) die(EXIT_INTERNAL, "/dev/null: %s", strerror(errno));
  if (null > 1) close(null);
  int fl = fcntl(chan_in, F_GETFL);
  if (fl < 0 || fcntl(chan_in, F_SETFL, fl | O_NONBLOCK) < 0) die(EXIT_INTERNAL, "channel: %s", strerror(errno));
}

/* The options, then SNAPSHOT WORKDIR -- LAUNCHER-ARGV...: the launcher's argv with our directory appended. A
 * return value of 0 or more is the exit status to end with now. */
static int parse_args(int argc, char **argv) {
  int opt;
  while ((opt = getopt(argc, argv, "+tvV")) != -1) {
    if (opt == 't') text_mode = 1;
    else if (opt == 'v') verbose = 1;
    else if (opt == 'V') {
      printf("swmux %d\n", PROTOCOL_VERSION);
      return EXIT_OK;
    } else return EXIT_USAGE;
  }
  argc -= optind - 1;
  argv += optind - 1;
  if (argc < 5 || strcmp(argv[3], "--") != 0) {
    fprintf(stderr, "usage: swmux [-t] [-v] SNAPSHOT WORKDIR -- LAUNCHER-ARGV...\n");
    return EXIT_USAGE;
  }
  if (strlen(argv[1]) >= sizeof snap || strlen(argv[2]) + sizeof "/swmux.XXXXXX" > sizeof dir) {
    fprintf(stderr, "swmux: path too long\n");
    return EXIT_USAGE;
  }
  snprintf(snap, sizeof snap, "%s", argv[1]);
  snprintf(dir, sizeof dir, "%s/swmux.XXXXXX", argv[2]);
  int n = argc - 4;
  launcher_argv = calloc((size_t)n + 2, sizeof *launcher_argv);
  if (!launcher_argv) die(EXIT_INTERNAL, "out of memory");
  for (int i = 0; i < n; i++) launcher_argv[i] = argv[4 + i];
  launcher_argv[n] = dir;
  return -1;
}

/* Signals, the subreaper bit, our directory and the pidfd probe. Returns the signal mask ppoll waits with, or
 * exits. */
static sigset_t set_up(void) {
  /* What commands send by habit (`kill $PPID`, `kill -HUP 0`, Ctrl-C to the group) is not for us. */
  const int ignored[] = {SIGPIPE, SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGUSR1,
                         SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU};
  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) signal(ignored[i], SIG_IGN);
  move_channel();
  /* A job whose launcher died becomes our child, not init's: its exit status
   * (a command that `exec`ed records none in its dump) is still ours to read. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigset_t chld, unblocked;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &unblocked);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "swmux: mkdtemp %s: %s\n", dir, strerror(errno));
    dir[0] = 0;
    exit(EXIT_INTERNAL);
  }
  /* Probe pidfd support now: without it (Linux < 5.3) there is no fast path. */
  int probe = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (probe < 0) {
    fprintf(stderr, "swmux: pidfd_open unavailable (Linux 5.3 or later is needed)\n");
    cleanup_dir();
    exit(EXIT_NO_PIDFD);
  }
  close(probe);
  return unblocked;
}

/* What one round of the loop waits on: the channel, every launcher's reports, and each live call's FIFOs and
 * pidfd. `who` and `ids` say whose each one is (a slot may be finished and reused while the round runs). */
enum { PROC_FDS = MAX_PROCS * 2 + 1, MAX_FDS = MAX_CALLS * 4 + MAX_LAUNCHERS + 1 + PROC_FDS };
struct watch {
  struct pollfd f[MAX_FDS];
  struct call *who[MAX_FDS];
  uint32_t ids[MAX_FDS];
  struct launcher *lw[MAX_LAUNCHERS];
  /* The attached processes' entries come last (procs.c), from first_proc. */
  int nf, nl, first_call, first_proc;
};

static void watch_fd(struct watch *w, int fd, uint32_t id, struct call *k) {
  w->f[w->nf].fd = fd;
  w->f[w->nf].events = POLLIN;
  w->ids[w->nf] = id;
  w->who[w->nf++] = k;
}

static void build_watch(struct watch *w) {
  w->nf = w->nl = 0;
  watch_fd(w, chan_in, 0, NULL);
  for (int i = 0; i < MAX_LAUNCHERS; i++)
    if (launchers[i].state != LAUNCHER_FREE) {
      w->lw[w->nl++] = &launchers[i];
      watch_fd(w, launchers[i].rep, launchers[i].gen, NULL);
    }
  w->first_call = w->nf;
  for (int i = 0; i < MAX_CALLS; i++) {
    struct call *k = &calls[i];
    if (k->state != CALL_SENT && k->state != CALL_RUNNING) continue;
    watch_fd(w, k->outfd, k->id, k);
    watch_fd(w, k->dumpfd, k->id, k);
    if (k->errfd >= 0) watch_fd(w, k->errfd, k->id, k);
    if (k->pidfd >= 0) watch_fd(w, k->pidfd, k->id, k);
  }
  w->first_proc = w->nf;
  w->nf += procs_watch(w->f + w->nf, MAX_FDS - w->nf);
}

static void serve_ready(struct watch *w) {
  /* Requests first, all of them: a kill Node sent before it signalled the
   * job must be seen before that job's exit (a killed call commits nothing). */
  if (w->f[0].revents) serve_requests();
  for (int i = 0; i < w->nl; i++) {
    struct launcher *l = w->lw[i];
    if (w->f[1 + i].revents && l->state != LAUNCHER_FREE && l->gen == w->ids[1 + i]) on_report(l);
  }
  for (int i = w->first_call; i < w->first_proc; i++) {
    struct call *k = w->who[i];
    int fd = w->f[i].fd;
    if (!w->f[i].revents || k->state == CALL_FREE || k->id != w->ids[i]) continue;
    if (fd == k->outfd) drain_fd(k, k->outfd, REP_OUTPUT, CALL_FIFO_BYTES);
    else if (fd == k->errfd) drain_fd(k, k->errfd, REP_STDERR, CALL_FIFO_BYTES);
    else if (fd == k->dumpfd) read_dump(k, CALL_FIFO_BYTES);
    else if (fd == k->pidfd) {
      serve_requests();
      if (k->state == CALL_RUNNING && k->id == w->ids[i]) job_exited(k);
    }
  }
}

int main(int argc, char **argv) {
  /* First: from here on no process of our uid without CAP_SYS_PTRACE opens our fds or traces us. */
  prctl(PR_SET_DUMPABLE, 0);
  /* PTY mode (native/pty.c): one program under a pseudo-terminal, no protocol. */
  if (argc > 1 && strcmp(argv[1], "-p") == 0) return pty_main(argc - 1, argv + 1);
  int early = parse_args(argc, argv);
  if (early >= 0) return early;
  sigset_t unblocked = set_up();
  wait_for_key();
  load_snapshot();
  start_launcher();
  take_frames(); /* what came with the key */
  static struct watch w;
  for (;;) {
    build_watch(&w);
    int wait_ms = check_stuck();
    if (procs_busy()) wait_ms = 0; /* a process's log has more than one round took */
    struct timespec limit = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
    /* SIGCHLD is blocked except inside ppoll: an orphan's exit wakes us to reap it (no zombie lingers). */
    int ready = ppoll(w.f, (nfds_t)w.nf, wait_ms >= 0 ? &limit : NULL, &unblocked);
    if (ready < 0 && errno != EINTR) die(EXIT_INTERNAL, "ppoll: %s", strerror(errno));
    reap();
    if (ready > 0) serve_ready(&w);
    procs_serve(w.f + w.first_proc, w.nf - w.first_proc);
  }
}
