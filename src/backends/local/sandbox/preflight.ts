/**
 * What the sandbox needs from the machine, checked before a sandboxed session
 * starts, so that a missing piece is an error that says what to install or
 * enable and never a session that silently runs unsandboxed: Linux, bubblewrap,
 * nsenter and setpriv (util-linux), and user namespaces that bwrap can create.
 * The namespace check runs bwrap once (per process) and reads its error,
 * because the sysctls that gate user namespaces differ between distributions.
 */

import { execFile } from "node:child_process";
import { accessSync, constants as fsConstants } from "node:fs";
import { delimiter, join } from "node:path";
import { BackendUnavailableError } from "../../../core/errors.js";

export interface SandboxTools {
  bwrap: string;
  nsenter: string;
  setpriv: string;
}

const PROBE_TIMEOUT_MS = 10_000;
let probed: Promise<void> | undefined;

const USERNS_HELP =
  "Enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian before 11), " +
  "sysctl -w user.max_user_namespaces=15000 (must not be 0), and on Ubuntu 23.10+ " +
  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile that allows userns for bwrap). " +
  "Inside a container, run it with --security-opt seccomp=unconfined or a profile that allows unshare/clone(CLONE_NEWUSER).";

/** Resolves the tools' absolute paths (on `searchPath`) and proves bwrap can build a sandbox here. */
export async function checkSandboxSupport(searchPath = process.env.PATH): Promise<SandboxTools> {
  if (process.platform !== "linux") {
    throw new BackendUnavailableError(
      `The local sandbox needs Linux with bubblewrap; this is ${process.platform}. Run Shellwright in a Linux VM or use the docker backend.`,
      { backend: "local" },
    );
  }
  const bwrap = findTool("bwrap", searchPath);
  if (bwrap === undefined) {
    throw new BackendUnavailableError(
      "The local sandbox needs bubblewrap (bwrap), which is not on PATH: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap).",
      { backend: "local" },
    );
  }
  const nsenter = findTool("nsenter", searchPath);
  const setpriv = findTool("setpriv", searchPath);
  if (nsenter === undefined || setpriv === undefined) {
    throw new BackendUnavailableError(
      `The local sandbox needs nsenter and setpriv from util-linux; ${nsenter === undefined ? "nsenter" : "setpriv"} is not on PATH: install util-linux (Debian/Ubuntu: apt-get install util-linux).`,
      { backend: "local" },
    );
  }
  if (process.getuid?.() !== 0 && !(await nsenterHasUserParent(nsenter))) {
    throw new BackendUnavailableError(
      "The local sandbox run by a non-root user needs nsenter from util-linux 2.39 or later (for --user-parent); " +
        `${nsenter} is older. Upgrade util-linux, or run as root.`,
      { backend: "local" },
    );
  }
  if (probed === undefined) {
    probed = probe(bwrap);
    probed.catch(() => (probed = undefined)); // checked again next time: the user may fix it meanwhile
  }
  await probed;
  return { bwrap, nsenter, setpriv };
}

/** Runs the namespaces a session uses once; its error names what is off. */
function probe(bwrap: string): Promise<void> {
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
  ];
  return new Promise((resolve, reject) => {
    execFile(bwrap, [...args, "--", "true"], { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const said = (stderr.trim() || error.message).split("\n")[0]!;
      const unknownOption = /Unknown option/i.test(said);
      const message = unknownOption
        ? `The local sandbox needs bubblewrap 0.8 or later (for --disable-userns); ${bwrap} said: ${said}. Upgrade bubblewrap.`
        : `bubblewrap cannot create the sandbox's namespaces here (${bwrap} said: ${said}). ${USERNS_HELP}`;
      reject(new BackendUnavailableError(message, { backend: "local" }));
    });
  });
}

function nsenterHasUserParent(nsenter: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(nsenter, ["--help"], { timeout: PROBE_TIMEOUT_MS }, (_error, stdout) => {
      resolve(stdout.includes("--user-parent"));
    });
  });
}

function findTool(name: string, searchPath: string | undefined): string | undefined {
  const dirs = searchPath === undefined ? ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] : searchPath.split(delimiter);
  for (const dir of dirs.filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}
