/* swmux's PTY mode (native/pty.c, docs/interactive.md). */
#ifndef SWMUX_PTY_H
#define SWMUX_PTY_H

/* `swmux -p ...`: argv[0] is "-p". Returns the exit status. */
int pty_main(int argc, char **argv);

#endif
