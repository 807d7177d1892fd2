/* The processes the helper streams (attach, input, detach): native/procs.c. */
#ifndef SWMUX_PROCS_H
#define SWMUX_PROCS_H
#include <poll.h>
#include <stdint.h>

void procs_attach(uint32_t id, const unsigned char *p, uint32_t len);
void procs_input(uint32_t id, const unsigned char *p, uint32_t len);
void procs_detach(uint32_t id);
/* Adds what the attached processes wait on to f (room entries at most); returns how many. */
int procs_watch(struct pollfd *f, int room);
/* Acts on what the last procs_watch entries (f, n of them) reported. */
void procs_serve(const struct pollfd *f, int n);
/* True when a process has output left that one round did not take: the next round must not wait. */
int procs_busy(void);
#endif
