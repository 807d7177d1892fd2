/**
 * File sync through the SDK backends' own filesystem APIs (Modal's
 * `sandbox.filesystem.writeBytes`, Daytona's `fs.uploadFiles`), driven by the
 * shared FileSync: what is sent when, with which modes, and everything again
 * after the sandbox was replaced. The fakes write to this machine's disk.
 */

import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  existsSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { FakeDaytona } from "../../fakes/fake-daytona.js";
import { FakeModalClient } from "../../fakes/fake-modal.js";

const work = mkdtempSync(join(tmpdir(), "sw-sdk-sync-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Harness {
  name: string;
  open(sync: object): Promise<{ env: Environment; writes(): string[]; replaceSandbox(): Promise<void> }>;
}

const harnesses: Harness[] = [
  {
    name: "modal",
    async open(sync) {
      const client = new FakeModalClient();
      const env = await createEnvironment({ backend: "modal", client, sync });
      return {
        env,
        writes: () =>
          client.sandboxesCreated.flatMap((s) => s.filesystem.calls.filter((c) => c.startsWith("writeBytes "))),
        // Its lifetime ran out (or someone terminated it): the next command gets a new one.
        replaceSandbox: async () => {
          await client.last.terminate();
        },
      };
    },
  },
  {
    name: "daytona",
    async open(sync) {
      const client = new FakeDaytona();
      const env = await createEnvironment({ backend: "daytona", client, sync });
      return {
        env,
        writes: () => client.sandboxes.flatMap((s) => s.fs.calls.filter((c) => c.startsWith("uploadFiles "))),
        replaceSandbox: async () => {
          await client.last.delete();
        },
      };
    },
  },
];

for (const harness of harnesses) {
  describe(`file sync through the ${harness.name} SDK`, () => {
    it("uploads changed files only, with their modes, mirrors a directory and re-sends all to a new sandbox", async () => {
      const base = mkdtempSync(join(work, `${harness.name}-`));
      const local = join(base, "local");
      const remote = join(base, "remote");
      mkdirSync(join(local, "skills", "deep"), { recursive: true });
      writeFileSync(join(local, "token"), "secret-1");
      writeFileSync(join(local, "skills", "a.md"), "A");
      writeFileSync(join(local, "skills", "deep", "run.sh"), "#!/bin/sh\necho run\n");
      chmodSync(join(local, "skills", "deep", "run.sh"), 0o755);
      const relative = `.shellwright-sync-test-${harness.name}-${process.pid}`;
      const sync = {
        files: [
          { local: join(local, "token"), remote: join(remote, "creds", "token") },
          { local: join(local, "token"), remote: `${relative}/token` },
        ],
        directories: [{ local: join(local, "skills"), remote: join(remote, "skills") }],
        intervalMs: 0,
      };
      const { env, writes, replaceSandbox } = await harness.open(sync);
      try {
        const first = await env.execute(
          `cat ${remote}/creds/token ~/${relative}/token; cat ${remote}/skills/a.md; ${remote}/skills/deep/run.sh; stat -c %a ${remote}/creds/token`,
        );
        expect(first.output).toBe("secret-1secret-1Arun\n600\n");
        expect(statSync(join(remote, "skills", "deep", "run.sh")).mode & 0o777).toBe(0o755);
        const afterFirst = writes().length;
        expect(afterFirst).toBeGreaterThan(0);

        await env.execute("true");
        expect(writes()).toHaveLength(afterFirst); // nothing changed, nothing sent

        writeFileSync(join(local, "token"), "secret-2");
        utimesSync(join(local, "token"), new Date(), new Date(Date.now() + 5000));
        rmSync(join(local, "skills", "a.md"));
        expect((await env.execute(`cat ${remote}/creds/token; ls ${remote}/skills`)).output).toBe("secret-2deep\n");
        expect(writes().length).toBeGreaterThan(afterFirst);

        const beforeReplace = writes().length;
        rmSync(join(remote), { recursive: true, force: true }); // the new sandbox has none of it
        await replaceSandbox();
        const again = await env.execute(`cat ${remote}/creds/token; ls ${remote}/skills`);
        expect(again.output).toContain("secret-2deep\n");
        expect(writes().length).toBeGreaterThan(beforeReplace);
        expect(readFileSync(join(remote, "creds", "token"), "utf8")).toBe("secret-2");
      } finally {
        await env.close();
        rmSync(join(process.env.HOME ?? "/root", relative), { recursive: true, force: true });
      }
      expect(existsSync(local)).toBe(true);
    });
  });
}
