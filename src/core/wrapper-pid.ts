/**
 * The line a call's outer shell prints first where the backend kills inside
 * a box (`Transport.needsRemotePid`): which process is the call's wrapper.
 */

export const pidMarker = (sessionId: string): string => `__SHELLWRIGHT_PID_${sessionId}__`;

/**
 * The outer shell's first lines where the backend kills inside a box: its
 * PID and start time (`/proc/$$/stat` field 22; empty without /proc), so a
 * kill that comes late never takes a newcomer on the same PID for the
 * wrapper. The fields are counted after the comm field's `) `, which may
 * hold spaces.
 */
export const reportPidLines = (sessionId: string): string[] => [
  "__sw_st=; { IFS= builtin read -r __sw_st < /proc/$$/stat; } 2>/dev/null; __sw_st=(${__sw_st##*) })",
  `builtin printf '__SHELLWRIGHT_PID_%s__%s:%s__\\n' ${sessionId} "$$" "\${__sw_st[19]}"`,
];
