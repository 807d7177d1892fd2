/**
 * A URL for a port of a docker session (src/backends/docker/ports.ts): the
 * `ports` option publishes on 127.0.0.1, and portUrl reads the host port the
 * engine chose. Against a real Docker Engine (SHELLWRIGHT_TEST_DOCKER=1): the
 * compat suite's docker container has no network, so it only checks the error.
 */

import { describe, expect, it } from "vitest";
import { createEnvironment, files, portUrl, spawn } from "../../../src/index.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as enabled } from "../../helpers/docker-test.js";

describe.skipIf(!enabled)("docker ports (real engine)", () => {
  it("publishes the ports named on 127.0.0.1 and gives their URL; another port says how to publish it", async () => {
    const env = await createEnvironment({ backend: "docker", image, ports: [8080] });
    try {
      await files(env).write("/srv/hello.txt", "from the container");
      const server = await spawn(env, "exec python3 -u -m http.server 8080", { cwd: "/srv" });
      for await (const text of server.output()) if (text.includes("Serving HTTP")) break;
      const { url, headers } = await portUrl(env, 8080);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toBe("http://127.0.0.1:8080");
      expect(headers).toEqual({});
      const response = await fetch(`${url}/hello.txt`);
      expect(await response.text()).toBe("from the container");
      await expect(portUrl(env, 9090)).rejects.toThrow(
        /port 9090 of the container .* is not published: .*ports: \[9090\]/,
      );
      await server.kill();
    } finally {
      await env.close();
    }
  });
});
