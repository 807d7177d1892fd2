/*
 * swmux's PTY mode: runs one program under a pseudo-terminal (docs/interactive.md).
 *
 * Why it is here: the helper is already built for, uploaded to and run on
 * every backend, so one mechanism gives a terminal everywhere, with no SDK's
 * PTY API and no `script`/python in the image.
 *
 * Usage: swmux -p [-c CTL-FIFO] [-g GRACE-MS] COLS ROWS -- ARGV...
 *
 * The program runs as the leader of a new session whose controlling terminal
 * is the PTY's slave (setsid + TIOCSCTTY), so Ctrl-C written to the master
 * reaches its foreground process group through the line discipline. We relay
 * our stdin to the master and the master to our stdout, byte for byte. At EOF
 * on stdin the terminal's EOF character (VEOF, ^D) is sent once.
 *
 * Out of band, CTL-FIFO takes lines "COLS ROWS": TIOCSWINSZ on the master,
 * so the program's foreground group gets SIGWINCH. It is a FIFO beside the
 * stdin one (not an escape in the stdin stream) so that no byte the program
 * is sent can ever be taken for a resize.
 *
 * Ending: SIGTERM, SIGHUP or SIGINT to us ends the program's whole session:
 * SIGHUP, SIGTERM and SIGCONT to every process of it, then SIGKILL to what is
 * left after GRACE-MS (default 1000; keep it below the caller's own grace).
 * When the program ends by itself, what it left in its session is ended the
 * same way, after the master's last output is relayed. Our exit status is the
 * program's (128 + N when signal N ended it). A process that calls setsid()
 * again leaves the session and is not found here (docs/interactive.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "pty.h"

#define PTY_EXIT_USAGE 2
#define PTY_EXIT_FAILED 125
#define PTY_EXIT_EXEC 127
/* A status for a program a signal ended, as a shell gives it: this plus the signal's number. */
#define SIGNAL_STATUS_BASE 128
/* The grace between SIGTERM and SIGKILL when the session ends: the default and the most -g takes. */
#define DEFAULT_GRACE_MS 1000
#define MAX_GRACE_MS 600000
/* The largest terminal side we set, in columns or rows. */
#define MAX_SIDE 10000
/* How long end_session sleeps between its looks at what is left. */
#define END_POLL_MS 20
/* One read of our stdin, and the longest control line ("COLS ROWS"). */
#define IN_CHUNK 4096
#define CTL_LINE_MAX 256
/* The EOF character when the terminal has none set (^D). */
#define DEFAULT_VEOF 4

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t child_changed;

static void on_stop(int sig) { stop_signal = sig; }
static void on_child(int sig) {
  (void)sig;
  child_changed = 1;
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int parse_int(const char *text, int min, int max, int *out) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != 0 || value < min || value > max) return -1;
  *out = (int)value;
  return 0;
}

/* Sends `sig` to every process whose session is `sid`; returns how many there were. */
static int signal_session(pid_t sid, int sig) {
  DIR *proc = opendir("/proc");
  if (!proc) {
    /* Without /proc only the leader's group is reachable. */
    return kill(-sid, sig) == 0 ? 1 : 0;
  }
  int found = 0;
  struct dirent *entry;
  while ((entry = readdir(proc)) != NULL) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%.20s/stat", entry->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0) continue;
    line[n] = 0;
    /* "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so parse after the last ')'. */
    char *rest = strrchr(line, ')');
    char state;
    int ppid, pgrp, session;
    if (!rest || sscanf(rest + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) != 4) continue;
    if (session != sid || state == 'Z') continue;
    found++;
    kill((pid_t)atoi(entry->d_name), sig);
  }
  closedir(proc);
  return found;
}

/* Relays everything the master has now to stdout; returns -1 once the slave side is gone (EIO). */
static int drain_master(int master) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(1, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break; /* stdout gone: the output is lost, the program still runs */
        off += w;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return 0;
    return -1;
  }
}

/* Ends the program's session: HUP, TERM and CONT, up to grace_ms for it to go, then KILL. */
static void end_session(pid_t sid, int master, int grace_ms) {
  if (signal_session(sid, SIGHUP) == 0) return;
  signal_session(sid, SIGTERM);
  signal_session(sid, SIGCONT);
  long long until = now_ms() + grace_ms;
  while (now_ms() < until) {
    drain_master(master);
    /* A zombie counts as gone: the leader, our child, is reaped by the caller. */
    if (signal_session(sid, 0) == 0) return;
    struct timespec pause = {0, END_POLL_MS * 1000000L};
    nanosleep(&pause, NULL);
  }
  signal_session(sid, SIGKILL);
}

static void apply_size(int master, const char *line) {
  int cols, rows;
  if (sscanf(line, "%d %d", &cols, &rows) != 2 || cols < 1 || cols > MAX_SIDE || rows < 1 || rows > MAX_SIDE) return;
  struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  ioctl(master, TIOCSWINSZ, &ws);
}

/* Reads resize requests; a partial line waits in `pending` for the rest. */
static void read_control(int ctl, int master, char *pending, size_t *len, size_t cap) {
  for (;;) {
    ssize_t n = read(ctl, pending + *len, cap - 1 - *len);
    if (n <= 0) return;
    *len += (size_t)n;
    pending[*len] = 0;
    char *start = pending, *nl;
    while ((nl = strchr(start, '\n')) != NULL) {
      *nl = 0;
      apply_size(master, start);
      start = nl + 1;
    }
    *len = strlen(start);
    memmove(pending, start, *len + 1);
    if (*len == cap - 1) *len = 0; /* an endless line is not a request */
  }
}

static void child_exec(const char *slave_name, char **argv, int master, int ctl) {
  /* What the helper ignores or blocks must not reach the program: dispositions and masks survive exec. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  close(master);
  if (ctl >= 0) close(ctl);
  if (setsid() < 0) _exit(PTY_EXIT_FAILED);
  int slave = open(slave_name, O_RDWR);
  if (slave < 0 || ioctl(slave, TIOCSCTTY, 0) < 0) _exit(PTY_EXIT_FAILED);
  if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0) _exit(PTY_EXIT_FAILED);
  if (slave > 2) close(slave);
  execvp(argv[0], argv);
  fprintf(stderr, "swmux: %s: %s\r\n", argv[0], strerror(errno));
  _exit(PTY_EXIT_EXEC);
}

struct pty_args {
  const char *ctl_path;
  int grace_ms, cols, rows;
  char **program;
};

/* [-c CTL-FIFO] [-g GRACE-MS] COLS ROWS -- ARGV...; -1 after the usage line. */
static int parse_pty_args(int argc, char **argv, struct pty_args *a) {
  int opt;
  a->ctl_path = NULL;
  a->grace_ms = DEFAULT_GRACE_MS;
  optind = 1;
  while ((opt = getopt(argc, argv, "+c:g:")) != -1) {
    if (opt == 'c') a->ctl_path = optarg;
    else if (opt != 'g' || parse_int(optarg, 0, MAX_GRACE_MS, &a->grace_ms) < 0) opt = '?';
    if (opt == '?') break;
  }
  if (opt == '?' || argc - optind < 4 || parse_int(argv[optind], 1, MAX_SIDE, &a->cols) < 0 ||
      parse_int(argv[optind + 1], 1, MAX_SIDE, &a->rows) < 0 || strcmp(argv[optind + 2], "--") != 0) {
    fprintf(stderr, "usage: swmux -p [-c CTL-FIFO] [-g GRACE-MS] COLS ROWS -- ARGV...\n");
    return -1;
  }
  a->program = argv + optind + 3;
  return 0;
}

/* The master of a new pseudo-terminal of the given size, its slave's name in `slave`; -1 after saying why. */
static int open_master(int cols, int rows, char *slave, size_t cap) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, slave, cap) != 0) {
    fprintf(stderr, "swmux: no pseudo-terminal: %s\n", strerror(errno));
    return -1;
  }
  struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  ioctl(master, TIOCSWINSZ, &ws);
  return master;
}

/* The signals that end us, and SIGCHLD, are taken only inside ppoll, so none is lost between a check and the
 * wait. Returns the mask ppoll waits with. */
static sigset_t catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_child;
  sigaction(SIGCHLD, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t blocked, unblocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGHUP);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGCHLD);
  sigprocmask(SIG_BLOCK, &blocked, &unblocked);
  return unblocked;
}

/* The relay between our stdin, the control FIFO and the master, while the program runs. */
struct relay {
  int master, ctl, stdin_open, master_open;
  char in[IN_CHUNK], pending[CTL_LINE_MAX];
  size_t in_len, in_off, pending_len;
};

/* What came on our stdin: the next bytes for the master, or at its end the terminal's EOF character, once. */
static void take_stdin(struct relay *r) {
  ssize_t n = read(0, r->in, sizeof r->in);
  if (n > 0) {
    r->in_len = (size_t)n;
    r->in_off = 0;
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    /* The caller closed our stdin: the program reads end-of-file, as at a terminal. */
    r->stdin_open = 0;
    struct termios t;
    r->in[0] = tcgetattr(r->master, &t) == 0 && t.c_cc[VEOF] != 0 ? (char)t.c_cc[VEOF] : DEFAULT_VEOF;
    r->in_len = 1;
    r->in_off = 0;
  }
}

/* One round: waits for the master, our stdin (when what it gave is written) and the control FIFO. */
static void relay_once(struct relay *r, const sigset_t *unblocked) {
  struct pollfd f[3];
  int nf = 0, in_at = -1, ctl_at = -1;
  /* Once no process holds the slave open, the master reports a hangup forever: it leaves the poll set. */
  short master_events = (short)(POLLIN | (r->in_len > r->in_off ? POLLOUT : 0));
  f[nf++] = (struct pollfd){.fd = r->master_open ? r->master : -1, .events = master_events};
  if (r->stdin_open && r->in_len == r->in_off) {
    in_at = nf;
    f[nf++] = (struct pollfd){.fd = 0, .events = POLLIN};
  }
  if (r->ctl >= 0) {
    ctl_at = nf;
    f[nf++] = (struct pollfd){.fd = r->ctl, .events = POLLIN};
  }
  if (ppoll(f, (nfds_t)nf, NULL, unblocked) <= 0) return;
  if ((f[0].revents & (POLLIN | POLLHUP | POLLERR)) && drain_master(r->master) < 0) {
    r->master_open = 0;
    r->in_len = r->in_off = 0; /* nobody reads the terminal any more */
  }
  if (f[0].revents & POLLOUT) {
    ssize_t w = write(r->master, r->in + r->in_off, r->in_len - r->in_off);
    if (w > 0) r->in_off += (size_t)w;
  }
  if (in_at >= 0 && f[in_at].revents) take_stdin(r);
  if (ctl_at >= 0 && f[ctl_at].revents) read_control(r->ctl, r->master, r->pending, &r->pending_len, sizeof r->pending);
}

int pty_main(int argc, char **argv) {
  struct pty_args a;
  if (parse_pty_args(argc, argv, &a) < 0) return PTY_EXIT_USAGE;
  char slave_name[PATH_MAX];
  static struct relay r;
  r.master = open_master(a.cols, a.rows, slave_name, sizeof slave_name);
  if (r.master < 0) return PTY_EXIT_FAILED;
  r.ctl = -1;
  /* Read-write, so the FIFO never reports EOF when a writer leaves. */
  if (a.ctl_path && (r.ctl = open(a.ctl_path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
    fprintf(stderr, "swmux: %s: %s\n", a.ctl_path, strerror(errno));
    return PTY_EXIT_FAILED;
  }
  sigset_t unblocked = catch_signals();
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "swmux: fork: %s\n", strerror(errno));
    return PTY_EXIT_FAILED;
  }
  if (child == 0) child_exec(slave_name, a.program, r.master, r.ctl);
  fcntl(r.master, F_SETFL, fcntl(r.master, F_GETFL) | O_NONBLOCK);
  r.stdin_open = r.master_open = 1;
  int status = 0, exited = 0;
  while (!exited && !stop_signal) {
    relay_once(&r, &unblocked);
    if (child_changed) {
      child_changed = 0;
      if (waitpid(child, &status, WNOHANG) == child) exited = 1;
    }
  }
  if (!exited) {
    end_session(child, r.master, a.grace_ms);
    waitpid(child, &status, 0);
  } else {
    drain_master(r.master);
    end_session(child, r.master, a.grace_ms);
  }
  drain_master(r.master);
  if (WIFSIGNALED(status)) return SIGNAL_STATUS_BASE + WTERMSIG(status);
  return WEXITSTATUS(status);
}
