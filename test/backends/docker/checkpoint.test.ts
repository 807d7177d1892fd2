/**
 * Checkpoints, rollback and fork on the docker backend with a workspace in
 * the container (docs/branching.md), on the real Docker Engine.
 */

import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointError, createEnvironment, InvalidOptionError, type Environment } from "../../../src/index.js";
import { FORK_LABEL, forkContainers } from "../../../src/backends/docker/checkpoint-fork.js";
import { EngineApi, defaultSocketPath } from "../../../src/backends/docker/engine.js";
import { DOCKER_TEST_ENABLED, DOCKER_TEST_IMAGE } from "../../helpers/docker-test.js";
import { eventually } from "../../helpers/processes.js";
import { runOk as run } from "../../helpers/session.js";

const opened: Environment[] = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((env) => env.close()));
});

async function open(config: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({
    backend: "docker",
    image: DOCKER_TEST_IMAGE,
    network: false,
    workspace: "/work",
    ...config,
  });
  opened.push(env);
  return env;
}

/** Every entry under /work: type, mode, and contents or link target (`find` in the container). */
const TREE = `cd /work && find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
  if [ -L "$p" ]; then echo "$p link $(readlink "$p")"; elif [ -d "$p" ]; then echo "$p dir $(stat -c %a "$p")";
  else echo "$p file $(stat -c %a "$p") $(md5sum < "$p" | cut -c1-8)"; fi; done`;

function docker(...args: string[]): string {
  return execFileSync("docker", args, { encoding: "utf8" }).trim();
}

describe.skipIf(!DOCKER_TEST_ENABLED)("docker checkpoints with a workspace", () => {
  it("rollback makes the workspace and shell what they were: contents, modes, symlinks, deletions, renames; later files gone", async () => {
    const env = await open();
    await run(
      env,
      "mkdir -p /work/sub && cd /work && echo alpha > a && chmod 640 a && printf '#!/bin/sh\\n' > run.sh && " +
        "chmod 755 run.sh && echo beta > sub/b && ln -s a link && ln -s /nowhere dangling && export V=one",
    );
    const before = await run(env, TREE);
    const cp = await env.checkpoint();
    expect(cp.holds).toEqual({ shell: true, workspace: { root: "/work", bytes: expect.any(Number) } });
    const pid = await run(
      env,
      "echo changed > a && chmod 600 run.sh && rm link && mv sub moved && ln -sf run.sh dangling && " +
        "echo new > new && mkdir newdir && export V=two && cd / && (setsid sleep 300 >/dev/null 2>&1 & echo $!)",
    );
    await env.rollback(cp);
    expect(await run(env, TREE)).toBe(before);
    expect(await run(env, 'pwd; echo "$V"')).toBe("/work\none");
    // A background process from after the checkpoint is ended, however it detached.
    expect(await run(env, `[ -e /proc/${pid} ] && echo alive || echo gone`)).toBe("gone");
    // A removed root is put back; nothing is left beside it.
    await run(env, "cd / && rm -rf /work");
    await env.rollback(cp);
    expect(await run(env, TREE)).toBe(before);
    expect(await run(env, "ls -A / | grep -c shellwright || true")).toBe("0");
  });

  it("refuses a checkpoint while a command runs; past workspaceMaxBytes it keeps nothing; close empties a kept container", async () => {
    const name = `shellwright-cp-test-${process.pid}`;
    const env = await open({ workspaceMaxBytes: 65536, containerName: name, keepContainer: true });
    try {
      const running = env.execute("while [ ! -e /tmp/go ]; do sleep 0.05; done; echo done");
      await eventually(async () => {
        const error = await env.checkpoint().catch((e: unknown) => e);
        if (!(error instanceof CheckpointError)) throw new Error(`expected a refusal, got ${String(error)}`);
        return error.reason === "busy";
      }, "the running command to be seen");
      docker("exec", name, "touch", "/tmp/go");
      expect((await running).output).toContain("done");

      await run(env, "mkdir -p /work && cd /work && head -c 131072 /dev/zero > big && export KEEP=yes");
      const before = await run(env, TREE);
      const error = await env.checkpoint().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as CheckpointError).reason).toBe("too_large");
      expect((error as Error).message).toMatch(/holds \d+ bytes, more than workspaceMaxBytes \(65536\)/);
      expect(env.checkpoints()).toEqual([]);
      const saved = () => docker("exec", name, "bash", "-c", "find /tmp -path '*/.shellwright-checkpoints-*' | wc -l");
      expect(saved()).toBe("0");
      expect(await run(env, TREE)).toBe(before);
      expect(await run(env, 'echo "$KEEP"; pwd')).toBe("yes\n/work");
      // A fork is refused the same way before it commits anything.
      const fork = await env.fork({ count: 2 }).catch((e: unknown) => e);
      expect((fork as CheckpointError).reason).toBe("too_large");
      expect(docker("images", "-q", "--filter", `label=${FORK_LABEL}=${env.id}`)).toBe("");

      await run(env, "rm big");
      const controller = new AbortController();
      controller.abort();
      const aborted = await env.checkpoint({ signal: controller.signal }).catch((e: unknown) => e);
      expect((aborted as CheckpointError).reason).toBe("aborted");
      await env.checkpoint();
      expect(Number(saved())).toBeGreaterThan(0);
      await env.close();
      // The container is kept; the checkpoints are not.
      expect(saved()).toBe("0");
    } finally {
      docker("rm", "-f", name);
    }
  });

  it("forks are new containers, independent of the parent and of each other; closing all leaves no container or image", async () => {
    const env = await open();
    await run(env, "mkdir -p /work && cd /work && echo parent > f && export V=parent");
    const children = await env.fork({ count: 2 });
    opened.push(...children);
    const [one, two] = children as [Environment, Environment];
    expect(new Set([env.id, one.id, two.id]).size).toBe(3);
    expect(await run(one, 'pwd; echo "$V"; cat f')).toBe("/work\nparent\nparent");
    await run(one, "echo one > f && export V=one && cd /");
    expect(await run(two, 'pwd; echo "$V"; cat f')).toBe("/work\nparent\nparent");
    expect(await run(env, 'pwd; echo "$V"; cat f')).toBe("/work\nparent\nparent");
    const label = `label=${FORK_LABEL}=${env.id}`;
    expect(docker("ps", "-q", "--filter", label).split("\n")).toHaveLength(2);
    expect(docker("images", "-q", "--filter", label)).not.toBe("");

    await env.close();
    expect(await run(one, 'pwd; echo "$V"; cat /work/f')).toBe("/\none\none");
    // A child's own checkpoint and rollback.
    const cp = await two.checkpoint();
    await run(two, "echo later > f");
    await two.rollback(cp);
    expect(await run(two, "cat f")).toBe("parent");

    await one.close();
    expect(docker("images", "-q", "--filter", label)).not.toBe("");
    await two.close();
    expect(docker("ps", "-aq", "--filter", label)).toBe("");
    expect(docker("images", "-q", "--filter", label)).toBe("");
  });

  it("a fork of a resumed session gives children ids of their own, starting from the parent's cwd now", async () => {
    const name = `sw-cp-resume-${process.pid}`;
    const first = await open({ containerName: name, keepContainer: true, cwd: "/etc" });
    const resumed = await open({ containerName: name, keepContainer: true, resume: first.state() });
    expect(resumed.id).toBe(first.id);
    try {
      await run(resumed, "mkdir -p /work && cd /usr && export V=resumed");
      const [child] = await resumed.fork({ count: 1 });
      opened.push(child!);
      expect(child!.id).not.toBe(resumed.id);
      expect(child!.cwd).toBe("/usr");
      expect(await run(child!, 'pwd; echo "$V"')).toBe("/usr\nresumed");
    } finally {
      await first.close();
      await resumed.close();
      docker("rm", "-f", name);
    }
  });

  it("a fork whose child fails to open closes the children opening beside it and removes the image", async () => {
    const env = await open({ workspace: undefined });
    const engine = new EngineApi(defaultSocketPath());
    const started: Environment[] = [];
    let calls = 0;
    try {
      const error = await forkContainers({
        engine,
        containerId: await run(env, "cat /etc/hostname"),
        sessionId: env.id,
        snapshot: env.paths.snapshot,
        cwd: "/",
        count: 3,
        signal: undefined,
        // The second child fails at once, while the first and third are still being opened.
        openChild: async (image) => {
          if (++calls === 2) throw new Error("injected: this child could not be opened");
          const child = await createEnvironment({ backend: "docker", image, network: false });
          started.push(child);
          const containerId = (await child.execute("cat /etc/hostname")).output.trim();
          return { env: child, containerId };
        },
      }).catch((e: unknown) => e);
      expect((error as Error).message).toContain("injected");
      expect(started).toHaveLength(2);
      expect(started.map((child) => child.closed)).toEqual([true, true]);
      expect(docker("images", "-q", "--filter", `label=${FORK_LABEL}=${env.id}`)).toBe("");
    } finally {
      opened.push(...started);
      engine.close();
    }
  });

  it("a workspace on a mount is refused by the first checkpoint, naming it", async () => {
    const env = await open({ workspace: "/etc" });
    const error = await env.checkpoint().catch((e: unknown) => e);
    expect((error as CheckpointError).reason).toBe("failed");
    expect((error as Error).message).toMatch(/the workspace \/etc is on or holds the mount \/etc\//);
    expect((await env.fork({ count: 1 }).catch((e: unknown) => e)) as Error).toBeInstanceOf(CheckpointError);
    expect(docker("ps", "-aq", "--filter", `label=${FORK_LABEL}=${env.id}`)).toBe("");
  });
});

describe.skipIf(!DOCKER_TEST_ENABLED)("docker fork beside an exec starting in the container", () => {
  // docker commit's pause froze the container while the helper's exec was starting in it, right after the
  // session opened: the exec failed ("cannot exec in a paused container", so no fast path), and at times runc's
  // join was frozen halfway, leaving the container frozen for good with every engine call on it hanging.
  it("a session forked as soon as it opens keeps its fast path, and no container is left paused", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }): void => {
      if (warning.code === "SHELLWRIGHT_FAST_PATH") warnings.push(warning.message);
    };
    process.on("warning", onWarning);
    try {
      // The chain's own label: other files pause containers of theirs while this runs.
      const labels = { "test.fork-chain": randomUUID() };
      const chain = `label=test.fork-chain=${labels["test.fork-chain"]}`;
      let session = await open({ workspace: undefined, labels });
      const first = session.id;
      // Each child is forked the moment it is open, while its helper starts.
      for (let generation = 0; generation < 6; generation++) {
        const [child] = await session.fork({ count: 1 });
        opened.push(child!);
        session = child!;
      }
      expect(await run(session, "echo $((20 + 22))")).toBe("42");
      expect(docker("ps", "-q", "--filter", chain).split("\n")).toHaveLength(7);
      expect(docker("ps", "-q", "--filter", chain, "--filter", "status=paused")).toBe("");
      expect(first).not.toBe(session.id);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });
});

describe("docker workspace options", () => {
  it("names the bad option and its value", async () => {
    const bad = async (config: Record<string, unknown>) =>
      createEnvironment({ backend: "docker", image: DOCKER_TEST_IMAGE, ...config }).catch((e: unknown) => e);
    const relative = await bad({ workspace: "work" });
    expect(relative).toBeInstanceOf(InvalidOptionError);
    expect((relative as InvalidOptionError).option).toBe("workspace");
    expect((relative as Error).message).toContain('"work"');
    expect(((await bad({ workspace: "/" })) as Error).message).toMatch(/container's root/);
    // The session's temp dir holds its state and checkpoints: a workspace holding it would copy into itself.
    for (const holding of ["/tmp", "/tmp/"]) {
      const refused = (await bad({ workspace: holding })) as InvalidOptionError;
      expect([refused.option, refused.message]).toEqual([
        "workspace",
        expect.stringMatching(/^workspace "\/tmp\/?" holds the session's temp dir \/tmp/),
      ]);
    }
    expect(((await bad({ workspaceMaxBytes: 10 })) as InvalidOptionError).option).toBe("workspaceMaxBytes");
    expect(((await bad({ workspace: "/w", workspaceMaxBytes: -1 })) as InvalidOptionError).option).toBe(
      "workspaceMaxBytes",
    );
  });
});
