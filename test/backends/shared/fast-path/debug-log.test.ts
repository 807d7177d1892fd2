/**
 * SHELLWRIGHT_FAST_PATH_DEBUG=<file>: the helper's debug log reaches the
 * file from every backend's helper, the ones in a box or on an ssh host
 * too (their stderr comes back over an exec or the ssh channel).
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Session } from "../../../../src/core/session.js";
import type { Transport } from "../../../../src/core/transport.js";
import { normalizeApptainerConfig } from "../../../../src/backends/apptainer/config.js";
import { ApptainerTransport } from "../../../../src/backends/apptainer/transport.js";
import { normalizeDockerConfig } from "../../../../src/backends/docker/config.js";
import { DockerTransport } from "../../../../src/backends/docker/transport.js";
import { normalizeLocalConfig } from "../../../../src/backends/local/config.js";
import { LocalTransport } from "../../../../src/backends/local/transport.js";
import { normalizeSshConfig } from "../../../../src/backends/ssh/config.js";
import { SshTransport } from "../../../../src/backends/ssh/transport.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import type { FastPathRunner } from "../../../../src/backends/shared/fast-path/fast-path-runner.js";
import { noLocalHelper, noStaticHelper, skipUnless } from "../../../helpers/native-helper.js";
import { eventually } from "../../../helpers/processes.js";
import { sshTestConfig, sshTestEnabled } from "../../ssh/ssh-env.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as dockerEnabled } from "../../../helpers/docker-test.js";

const standIn = fileURLToPath(new URL("../../../fixtures/apptainer-standin/apptainer", import.meta.url));

type WithRunner = Transport & { readonly fastPathRunner: FastPathRunner | undefined };

/** noHelper: why the helper that backend runs is missing here (a box or ssh host gets the static one). */
const backends: { name: string; enabled: boolean; noHelper: string | undefined; make(): WithRunner }[] = [
  { name: "local", enabled: true, noHelper: noLocalHelper, make: () => new LocalTransport(normalizeLocalConfig({})) },
  {
    name: "apptainer (stand-in)",
    enabled: true,
    noHelper: noStaticHelper,
    make: () =>
      new ApptainerTransport(
        normalizeApptainerConfig({
          image: "docker://debian:bookworm-slim",
          executable: standIn,
          scratchDir: join(tmpdir(), "shellwright-test-debug-log"),
        }),
      ),
  },
  {
    name: "docker",
    enabled: dockerEnabled,
    noHelper: noStaticHelper,
    make: () => new DockerTransport(normalizeDockerConfig({ image, network: false }, () => undefined)),
  },
  {
    name: "ssh",
    enabled: sshTestEnabled,
    noHelper: noStaticHelper,
    make: () => new SshTransport(normalizeSshConfig({ ...sshTestConfig() }, () => undefined)),
  },
];

let dir: string;
let session: Session | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sw-debug-log-"));
  process.env.SHELLWRIGHT_FAST_PATH_DEBUG = join(dir, "helper.log");
});

afterEach(async () => {
  delete process.env.SHELLWRIGHT_FAST_PATH_DEBUG;
  await session?.close();
  session = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("the fast path's debug log", () => {
  for (const backend of backends)
    it.skipIf(!backend.enabled)(`reaches the file from the ${backend.name} helper`, async (context) => {
      skipUnless(context, backend.noHelper);
      const transport = backend.make();
      session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, "/tmp"));
      // The ssh helper is copied in the background: the first calls may run plain.
      for (let i = 0; i < 100 && (await transport.fastPathRunner?.whenReady()) !== true; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await transport.fastPathRunner?.whenReady()).toBe(true);
      expect((await session.execute("echo logged")).output).toBe("logged\n");
      const log = (): string => readFileSync(join(dir, "helper.log"), "utf8");
      // A remote helper's stderr comes back on its own stream, after the call's frames.
      await eventually(() => /swmux\[\d+\] \d+: call \d+ ended/.test(log()), "the call in the log");
      expect(log()).toMatch(/swmux\[\d+\] \d+: launcher \d+ \(gen \d+\) started/);
      expect(log()).toMatch(/swmux\[\d+\] \d+: call \d+ sent to launcher \d+/);
    });
});
