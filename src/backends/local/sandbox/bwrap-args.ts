/**
 * The bwrap and nsenter command lines, kept pure so a test can read them.
 *
 * One bwrap per session holds the namespaces (its init is the sandbox's pid 1)
 * and every call enters them with nsenter: bwrap's setup (about 4 ms with a
 * network namespace) is paid once, and the private /tmp and the proxy bridge
 * live as long as the session.
 *
 * Order matters to bwrap, later mounts cover earlier ones: the read-only root,
 * then fresh /dev, /proc and /tmp, then empty dirs over the host's runtime
 * dirs (host-runtime.ts), then the writable binds and what is bound back, then
 * the denied paths (so a denied path inside a writable one stays denied).
 * The runtime dirs' tmpfs is made read-only last: until then bwrap can still
 * create the mount points of what is bound back inside it.
 */

import type { ResolvedSandbox } from "./config.js";

export interface BwrapPlan {
  sandbox: ResolvedSandbox;
  /** The session's private dir (snapshot, cwd file, results): writable inside. */
  stateDir: string;
  /** The proxy's unix socket, bound read-only into the sandbox; only for an allowlist. */
  proxySocket?: string | undefined;
  /** Host dirs covered by an empty one (the runtime dirs with the host's sockets). @default [] */
  hidden?: string[] | undefined;
  /** Host dirs covered by an empty writable one, as /tmp is (a $TMPDIR elsewhere). @default [] */
  scratch?: string[] | undefined;
  /** Host files bound back read-only over the hidden dirs. @default [] */
  bindBack?: string[] | undefined;
  /** A workspace seen as an overlay (overlay.ts): its root, bound read-only until the overlay covers it, and its layers dir. */
  workspace?: { root: string; layers: string } | undefined;
}

/** bwrap's arguments up to and including "--"; the init command follows. */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const { sandbox } = plan;
  const args = [
    "--unshare-user",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(sandbox.network === "host" ? [] : ["--unshare-net"]),
    // No new user namespace inside (unshare -U, and so no mount or nsenter with regained capabilities).
    "--disable-userns",
    // As root, bwrap would otherwise keep root's capabilities in the sandbox.
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
  ];
  const hidden = plan.hidden ?? [];
  const covered = [...hidden, ...(plan.scratch ?? [])];
  // A writable dir around a covered one (a cwd of /) must not bring its sockets back: bound before the cover.
  const inHidden = (path: string): boolean => covered.some((dir) => path === dir || path.startsWith(`${dir}/`));
  // The workspace is writable through its overlay only: the host directory itself never is.
  const ws = plan.workspace;
  const writable = sandbox.writable.filter((path) => path !== ws?.root);
  for (const path of writable.filter((p) => !inHidden(p))) args.push("--bind", path, path);
  for (const path of covered) args.push("--tmpfs", path);
  for (const path of [...writable.filter(inHidden), plan.stateDir]) args.push("--bind", path, path);
  if (ws !== undefined) args.push("--ro-bind", ws.root, ws.root, "--bind", ws.layers, ws.layers);
  if (plan.proxySocket !== undefined) args.push("--ro-bind", plan.proxySocket, plan.proxySocket);
  for (const path of plan.bindBack ?? []) args.push("--ro-bind", path, path);
  for (const { path, directory } of sandbox.denyRead) {
    if (directory) args.push("--tmpfs", path, "--remount-ro", path);
    else args.push("--ro-bind", "/dev/null", path);
  }
  // A writable path that is a hidden dir itself is bound over the cover at the same place: a remount would hit it.
  for (const path of hidden.filter((dir) => !sandbox.writable.includes(dir))) args.push("--remount-ro", path);
  args.push("--info-fd", "3", "--");
  return args;
}

export interface EnterPlan {
  nsenter: string;
  setpriv: string;
  /** The sandbox's pid 1, as the host sees it. */
  initPid: number;
  /** False when the sandbox shares the host's network (`network: "host"`). */
  ownNetwork: boolean;
  /** Running as root: the other namespaces are entered before the user namespace. */
  root: boolean;
}

/**
 * The prefix that runs a command inside the session's sandbox. nsenter gives
 * the entering process every capability in the sandbox's user namespace, so
 * setpriv drops them all (and the bounding set, so exec cannot bring them
 * back) before the command starts; no_new_privs keeps setuid binaries inert.
 */
export function enterArgs(plan: EnterPlan): string[] {
  return [
    plan.nsenter,
    `--target=${plan.initPid}`,
    // Without root the namespaces belong to the user namespace around the
    // innermost one that --disable-userns makes; only from there can they be entered.
    ...(plan.root ? ["--user"] : ["--user", "--user-parent"]),
    "--mount",
    "--pid",
    "--ipc",
    "--uts",
    ...(plan.ownNetwork ? ["--net"] : []),
    "--root",
    "--preserve-credentials",
    "--",
    plan.setpriv,
    "--bounding-set=-all",
    "--inh-caps=-all",
    "--ambient-caps=-all",
    "--no-new-privs",
    // nsenter forks the process inside: it must not outlive nsenter, which is what the host kills.
    "--pdeathsig=KILL",
    "--",
  ];
}
