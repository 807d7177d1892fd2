/** The closing line of a test run: which backends ran, and how to run the skipped ones. */

import { describe, expect, it } from "vitest";
import { backendSummary } from "./backend-summary.js";

describe("backendSummary", () => {
  it("names each skipped backend with the command that enables it", () => {
    const line = backendSummary({});
    expect(line).toMatch(
      /^Backends: ran local, gateway, .*; skipped ssh \(.*sshd\.sh start.*\), docker \(.*SHELLWRIGHT_TEST_DOCKER=1\)\. bash \.ci\/run /,
    );
    expect(line).not.toContain("\n");
  });

  it("says nothing was skipped when every backend is enabled", () => {
    const line = backendSummary({ SHELLWRIGHT_TEST_SSH: "1", SHELLWRIGHT_TEST_DOCKER: "1" });
    expect(line).toBe(
      "Backends: ran local, gateway, ssh, docker, apptainer/modal/daytona stand-ins, remote-style; none skipped.",
    );
  });

  it("counts the gateway as skipped when turned off", () => {
    expect(backendSummary({ SHELLWRIGHT_TEST_GATEWAY: "0" })).toContain(
      "skipped gateway (unset SHELLWRIGHT_TEST_GATEWAY)",
    );
  });

  it("says when SHELLWRIGHT_TEST_BACKENDS narrowed the per-backend suites", () => {
    expect(backendSummary({ SHELLWRIGHT_TEST_BACKENDS: "local,gateway" })).toBe(
      "Backends: only local, gateway in the per-backend suites (SHELLWRIGHT_TEST_BACKENDS); unset it to run every enabled backend.",
    );
  });
});
