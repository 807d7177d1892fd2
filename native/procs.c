/*
 * The background processes the helper streams (docs/fast-path.md): a PTY's
 * keystroke is one `I` frame written to the process's stdin FIFO here, and
 * its echo one `o` frame read from the process's log as the kernel says the
 * log grew (inotify), with no process started in the backend for either and
 * no call slot held: the table below is apart from the calls.
 *
 * A process is attached by the pid of its wrapper, which one of our jobs
 * started and which became our child when that job ended (we are the
 * subreaper): its pid cannot be reused while we have not reaped it, so the
 * pidfd we open for its end is its own. The log is read from its start,
 * through the layout log-bound.ts gives it (a head `log`, then segments
 * `log.%012d` of which the bounder keeps the last two; without a `bound`
 * file, `log` alone). A process whose stderr is kept apart (the attach's
 * ATTACH_FLAG_STDERR_APART) has a second log, `err`, of the same layout: it is
 * read the same way, apart, and sent as `E` frames (its stdout's as `o`). The
 * log is the buffer: we read it as fast as Node takes our frames, so a flood
 * with a slow reader costs us one frame's buffer.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "protocol.h"
#include "procs.h"
#include "swmux.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* One round of the loop takes at most this much of one process's log, so that a flood cannot starve the calls. */
#define PROC_ROUND_BYTES (1 << 20)
/* A log's file when none of its files is open. */
#define LOG_NONE (-2)
/* A log's file for its head, `log` or `err` (a segment's is its number). */
#define LOG_HEAD (-1)
/* inotify events read at once: enough for many, each at most a header and a name. */
#define CHUNK_EVENTS 4096
/* A segment's name: log.%012lld (or err.%012lld). */
#define SEGMENT_NAME_MAX 32
/* The length of a log's name, `log` or `err`, before a segment's dot. */
#define LOG_NAME_LEN 3
/* The logs one process may have: its stdout's (or both streams merged), and its stderr's when apart. */
#define PROC_LOGS 2
/* The attach payload: u32be pid, u8 flags, then the directory. */
#define ATTACH_HEAD 5
/* The digits of a segment's number in its name (log-bound.ts). */
#define SEGMENT_DIGITS 12
/* The `bound` file: two numbers and a newline. */
#define BOUND_FILE_MAX 64
/* What the watch of one process is: its end, its stdin's room (the log's changes come on the one inotify fd). */
#define PROC_WATCHES 2

enum proc_state {
  PROC_FREE,
  PROC_ATTACHED,
};

enum proc_flag {
  PROC_MORE = 1 << 0,   /* a round left output unread: the next one reads on without waiting */
  PROC_EXITED = 1 << 1, /* its pidfd fired: what the log holds is sent, then its end */
};

/* One log a channel reads: its name, the frame its bytes go in, and how far it got. */
struct proc_log {
  const char *name;    /* "log" or "err" */
  unsigned char frame; /* REP_PROC_OUTPUT or REP_PROC_STDERR */
  int fd;
  /* Which file fd is: LOG_HEAD, a segment's number, or LOG_NONE. */
  long long file;
  /* Bytes of this log's whole output sent so far (the offsets of log-bound.ts). */
  unsigned long long offset;
};

struct proc {
  enum proc_state state;
  unsigned flags; /* enum proc_flag */
  uint32_t id;
  pid_t pid;
  /* wd: its directory's watch on `notify` (two attaches to one process share it). */
  int pidfd, wd, dirfd, infd;
  struct proc_log logs[PROC_LOGS];
  int nlogs;
  /* The bound layout (head, segment bytes), shared by its logs; seg 0: each one unbounded file. */
  unsigned long long head, seg;
  /* An input the FIFO had no room for yet: sent on as it drains, then acked. */
  unsigned char *in;
  size_t in_len, in_off;
};

static struct proc procs[MAX_PROCS];
/* One inotify instance for every process (a user has 128 in all, shared with every other program of theirs). */
static int notify = -1;

/* Whose each entry of the last procs_watch is, and its id then (a slot may be freed and reused meanwhile). */
static struct proc *watched[MAX_PROCS * PROC_WATCHES + 1];
static uint32_t watched_ids[MAX_PROCS * PROC_WATCHES + 1];

static struct proc *find_proc(uint32_t id) {
  for (int i = 0; i < MAX_PROCS; i++)
    if (procs[i].state == PROC_ATTACHED && procs[i].id == id) return &procs[i];
  return NULL;
}

static void ack(uint32_t id, unsigned char status) { frame(REP_INPUT_ACK, id, &status, 1); }

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Its directory's watch goes with the last attach that shares it. */
static void forget_watch(struct proc *p) {
  if (p->wd < 0) return;
  for (int i = 0; i < MAX_PROCS; i++)
    if (&procs[i] != p && procs[i].state == PROC_ATTACHED && procs[i].wd == p->wd) {
      p->wd = -1;
      return;
    }
  inotify_rm_watch(notify, p->wd);
  p->wd = -1;
}

/* The channel's last frame: an input still pending is answered first (nothing more of it is written). */
static void end_proc(struct proc *p, unsigned char why) {
  if (p->in) ack(p->id, INPUT_CLOSED);
  free(p->in);
  p->in = NULL;
  close_fd(&p->pidfd);
  forget_watch(p);
  close_fd(&p->dirfd);
  for (int i = 0; i < p->nlogs; i++) close_fd(&p->logs[i].fd);
  close_fd(&p->infd);
  p->state = PROC_FREE;
  frame(REP_PROC_END, p->id, &why, 1);
  debug("process channel %u ended (%d)", p->id, why);
}

/* The number of a segment of the log named `log` (log or err) from its name, exactly as the writer makes it (log.%012d:
 * "log." and SEGMENT_DIGITS digits), or -1 for any other name (a planted log.<huge> must not move the stream). */
static long long segment_number(const char *log, const char *name) {
  if (strncmp(name, log, LOG_NAME_LEN) != 0 || name[LOG_NAME_LEN] != '.') return -1;
  const char *digits = name + LOG_NAME_LEN + 1;
  long long n = 0;
  for (int i = 0; i < SEGMENT_DIGITS; i++) {
    char c = digits[i];
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return digits[SEGMENT_DIGITS] == 0 ? n : -1;
}

/* The oldest segment of l after k that is there (the bounder removed k and maybe more: we fell behind), or -1. */
static long long next_segment(struct proc *p, const struct proc_log *l, long long k) {
  int fd = openat(p->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return -1;
  }
  long long best = -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    long long n = segment_number(l->name, e->d_name);
    if (n > k && (best < 0 || n < best)) best = n;
  }
  closedir(d);
  return best;
}

/* A file of the process's directory to read: a regular file only, and never waiting in open (a FIFO put in its
 * place, by a command of the same user, must not block the helper); -1 otherwise. */
static int open_regular(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) close_fd(&fd);
  return fd;
}

/* Where l's offset is: which file, at which position, and where that file ends (the whole stream's layout). */
static long long locate(const struct proc *p, const struct proc_log *l, unsigned long long *pos,
                        unsigned long long *limit) {
  if (!p->seg) {
    *pos = l->offset, *limit = ULLONG_MAX;
    return LOG_HEAD;
  }
  if (l->offset < p->head) {
    *pos = l->offset, *limit = p->head;
    return LOG_HEAD;
  }
  *pos = (l->offset - p->head) % p->seg, *limit = p->seg;
  return (long long)((l->offset - p->head) / p->seg);
}

/* Opens l's file holding its offset; 0, or -1 when it is not there (yet, or no more: then offset skips ahead). */
static int open_log(struct proc *p, struct proc_log *l, unsigned long long *pos, unsigned long long *limit) {
  for (;;) {
    long long file = locate(p, l, pos, limit);
    if (file == l->file && l->fd >= 0) return 0;
    close_fd(&l->fd);
    l->file = LOG_NONE;
    char name[SEGMENT_NAME_MAX];
    if (file == LOG_HEAD) snprintf(name, sizeof name, "%s", l->name);
    else snprintf(name, sizeof name, "%s.%0*lld", l->name, SEGMENT_DIGITS, file);
    l->fd = open_regular(p->dirfd, name);
    if (l->fd >= 0) {
      l->file = file;
      return 0;
    }
    long long later = file == LOG_HEAD ? -1 : next_segment(p, l, file);
    /* A segment whose start the offsets cannot hold is none of the writer's. */
    if (later < 0 || (unsigned long long)later > (ULLONG_MAX - p->head) / p->seg) return -1;
    /* The bytes in between are gone, as they are for poll (log-bound.ts): the stream goes on from there (a later
     * segment each time, so this ends). */
    l->offset = p->head + (unsigned long long)later * p->seg;
  }
}

/* Sends what log l holds past its offset, up to budget bytes. 1: all of it (an end of file reached); 0: more left. */
static int pump_log(struct proc *p, struct proc_log *l, size_t budget) {
  static char buf[MAX_OUTPUT_FRAME];
  size_t sent = 0;
  while (sent < budget) {
    unsigned long long pos, limit;
    if (open_log(p, l, &pos, &limit)) return 1;
    if (pos >= limit) continue; /* a full segment: the next one */
    size_t want = limit - pos < sizeof buf ? (size_t)(limit - pos) : sizeof buf;
    ssize_t r = pread(l->fd, buf, want, (off_t)pos);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 1;
    frame(l->frame, p->id, buf, (uint32_t)r);
    l->offset += (unsigned long long)r;
    sent += (size_t)r;
  }
  return 0;
}

/* Sends what the logs hold, up to budget bytes of each (a flood on one does not hold the other back). 1: all of it;
 * 0: more left (the next round goes on). */
static int pump(struct proc *p, size_t budget) {
  int all = 1;
  p->flags &= ~(unsigned)PROC_MORE;
  for (int i = 0; i < p->nlogs; i++)
    if (!pump_log(p, &p->logs[i], budget)) all = 0;
  if (!all) p->flags |= PROC_MORE;
  return all;
}

/* The `bound` file's layout, when the log is bounded (log-bound.ts); else seg stays 0. */
static void read_bound(struct proc *p) {
  char b[BOUND_FILE_MAX];
  int fd = open_regular(p->dirfd, "bound");
  if (fd < 0) return;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return;
  b[n] = 0;
  unsigned long long h, s;
  if (sscanf(b, "%llu %llu", &h, &s) == 2 && h > 0 && s > 0) p->head = h, p->seg = s;
}

/* Opens what an attached process is watched by; 0, or -1 (the caller ends it refused). */
static int open_proc(struct proc *p, const char *dir) {
  p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (p->dirfd < 0) return -1;
  read_bound(p);
  if (notify < 0) notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (notify < 0) return -1;
  p->wd = inotify_add_watch(notify, dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO);
  if (p->wd < 0) return -1;
  p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
  return p->pidfd < 0 ? -1 : 0;
}

/* The logs a channel reads: `log` as `o` frames, and with stderr apart `err` as `E` frames. */
static void init_logs(struct proc *p, unsigned char flags) {
  static const struct proc_log kinds[PROC_LOGS] = {
      {"log", REP_PROC_OUTPUT, -1, LOG_NONE, 0},
      {"err", REP_PROC_STDERR, -1, LOG_NONE, 0},
  };
  p->nlogs = flags & ATTACH_FLAG_STDERR_APART ? PROC_LOGS : 1;
  for (int i = 0; i < p->nlogs; i++) p->logs[i] = kinds[i];
}

void procs_attach(uint32_t id, const unsigned char *b, uint32_t len) {
  if (find_proc(id)) die(EXIT_PROTOCOL, "protocol violation: process channel %u is already attached", id);
  unsigned char flags = b[ATTACH_HEAD - 1];
  if (flags & ~(unsigned)ATTACH_FLAGS_KNOWN)
    die(EXIT_PROTOCOL, "protocol violation: attach flags 0x%02x for process channel %u", flags, id);
  struct proc *p = NULL;
  for (int i = 0; i < MAX_PROCS && !p; i++)
    if (procs[i].state == PROC_FREE) p = &procs[i];
  char dir[MAX_PROC_DIR_BYTES + 1];
  memcpy(dir, b + ATTACH_HEAD, len - ATTACH_HEAD);
  dir[len - ATTACH_HEAD] = 0;
  pid_t pid = (pid_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
  unsigned char refused = PROC_END_REFUSED;
  /* Only our own child: a pid we have not reaped cannot be another process's by the time the pidfd is open. */
  if (!p || pid <= 1 || strlen(dir) != len - ATTACH_HEAD || parent_of(pid) != getpid()) {
    frame(REP_PROC_END, id, &refused, 1);
    return;
  }
  memset(p, 0, sizeof *p);
  p->state = PROC_ATTACHED;
  p->id = id;
  p->pid = pid;
  p->pidfd = p->wd = p->dirfd = p->infd = -1;
  init_logs(p, flags);
  /* What the log holds already is sent in the next round. */
  p->flags = PROC_MORE;
  if (open_proc(p, dir)) end_proc(p, PROC_END_REFUSED);
  else debug("process %d attached as channel %u", (int)pid, id);
}

/* Writes what is pending of the input; when all of it is in (or cannot be), the ack. */
static void write_input(struct proc *p) {
  while (p->in_off < p->in_len) {
    ssize_t w = write(p->infd, p->in + p->in_off, p->in_len - p->in_off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return; /* its reader is behind: POLLOUT brings us back */
    if (w < 0) break;
    p->in_off += (size_t)w;
  }
  unsigned char status = p->in_off == p->in_len ? INPUT_WRITTEN : INPUT_CLOSED;
  free(p->in);
  p->in = NULL;
  p->in_len = p->in_off = 0;
  /* Not held open: the process reads EOF as soon as its stdin is closed (the holder killed). */
  close_fd(&p->infd);
  ack(p->id, status);
}

/* Whether its stdin takes input now: the holder's pid in `holder` (process-scripts.ts); none yet, or emptied. */
static unsigned char stdin_state(struct proc *p) {
  struct stat st;
  if (fstatat(p->dirfd, "holder", &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? INPUT_NOT_READY : INPUT_CLOSED;
  return st.st_size > 0 ? INPUT_WRITTEN : INPUT_CLOSED;
}

/* The process's stdin FIFO for one write; -1 when it has no reader (ENXIO: it ended or closed its stdin), or `in` is
 * not a FIFO any more (a command replaced it: the keystrokes must not land in a file). */
static int open_stdin(struct proc *p) {
  int fd = openat(p->dirfd, "in", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))) close_fd(&fd);
  return fd;
}

void procs_input(uint32_t id, const unsigned char *b, uint32_t len) {
  struct proc *p = find_proc(id);
  /* Ended or detached meanwhile (a race Node may lose): its `x` is sent already, and nothing of a channel comes after
   * it (Node settles the write closed at the `x`). */
  if (!p) return;
  if (p->flags & PROC_EXITED) {
    ack(id, INPUT_CLOSED);
    return;
  }
  if (p->in) die(EXIT_PROTOCOL, "protocol violation: input for process channel %u before its last was acked", id);
  unsigned char state = stdin_state(p);
  if (state == INPUT_WRITTEN) {
    /* No reader (ENXIO): it has ended or closed its stdin. */
    p->infd = open_stdin(p);
    if (p->infd < 0) state = INPUT_CLOSED;
  }
  if (state != INPUT_WRITTEN) {
    ack(id, state);
    return;
  }
  p->in = xmalloc(len);
  memcpy(p->in, b, len);
  p->in_len = len;
  p->in_off = 0;
  write_input(p);
}

void procs_detach(uint32_t id) {
  struct proc *p = find_proc(id);
  if (p) end_proc(p, PROC_END_DETACHED); /* else it ended first: its end frame is on its way */
}

static void watch_one(struct pollfd *f, int *n, int fd, short events, struct proc *p) {
  f[*n].fd = fd;
  f[*n].events = events;
  f[*n].revents = 0;
  watched[*n] = p;
  watched_ids[*n] = p->id;
  (*n)++;
}

int procs_watch(struct pollfd *f, int room) {
  int n = 0;
  if (notify >= 0 && room > 0) {
    f[n].fd = notify, f[n].events = POLLIN, f[n].revents = 0;
    watched[n++] = NULL;
  }
  for (int i = 0; i < MAX_PROCS && n + PROC_WATCHES <= room; i++) {
    struct proc *p = &procs[i];
    if (p->state != PROC_ATTACHED) continue;
    if (p->pidfd >= 0) watch_one(f, &n, p->pidfd, POLLIN, p);
    if (p->in) watch_one(f, &n, p->infd, POLLOUT, p);
  }
  return n;
}

/* Marks every process whose directory changed (all of them when the kernel's queue overflowed). */
static void drain_notify(void) {
  char events[CHUNK_EVENTS] __attribute__((aligned(__alignof__(struct inotify_event))));
  ssize_t n;
  while ((n = read(notify, events, sizeof events)) > 0) {
    for (char *e = events; e < events + n; e += sizeof(struct inotify_event) + ((struct inotify_event *)e)->len) {
      const struct inotify_event *ev = (const struct inotify_event *)e;
      for (int i = 0; i < MAX_PROCS; i++)
        if (procs[i].state == PROC_ATTACHED && (ev->wd == procs[i].wd || (ev->mask & IN_Q_OVERFLOW)))
          procs[i].flags |= PROC_MORE;
    }
  }
}

/* A round's reading for one process: its output, and after its end the end frame once all of it is sent. */
static void serve_proc(struct proc *p) {
  if (p->state != PROC_ATTACHED) return;
  if (pump(p, PROC_ROUND_BYTES) && (p->flags & PROC_EXITED)) end_proc(p, PROC_END_ENDED);
}

void procs_serve(const struct pollfd *f, int n) {
  for (int i = 0; i < n; i++) {
    struct proc *p = watched[i];
    if (f[i].revents && !p) drain_notify();
    if (!f[i].revents || !p || p->state != PROC_ATTACHED || p->id != watched_ids[i]) continue;
    if (f[i].fd == p->pidfd) {
      /* The wrapper waited for its log's writer to drain before it exited: the log is whole now. */
      close_fd(&p->pidfd);
      p->flags |= PROC_EXITED | PROC_MORE;
    } else if (f[i].fd == p->infd && p->in) {
      write_input(p);
    }
  }
  for (int i = 0; i < MAX_PROCS; i++)
    if (procs[i].state == PROC_ATTACHED && (procs[i].flags & PROC_MORE)) serve_proc(&procs[i]);
}

int procs_busy(void) {
  for (int i = 0; i < MAX_PROCS; i++)
    if (procs[i].state == PROC_ATTACHED && (procs[i].flags & PROC_MORE)) return 1;
  return 0;
}
