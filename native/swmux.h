/* What swmux.c lends the files beside it (procs.c). */
#ifndef SWMUX_H
#define SWMUX_H
#include <stdint.h>
#include <sys/types.h>

/* One frame to Node, numbered and tagged. */
void frame(char t, uint32_t id, const void *b, uint32_t n);
/* Ends the helper with a reason on stderr. */
void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A process's parent; -1 when it is gone, 0 while it is being reaped. */
pid_t parent_of(pid_t pid);
void *xmalloc(size_t n);
#endif
