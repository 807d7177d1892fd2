/**
 * What the model sees of every tool in the registry, pinned by snapshot
 * (review prompt changes). The registry's behaviour is in registry.test.ts.
 */

import { describe, expect, it } from "vitest";
import { toolSchemas } from "../../src/tools/registry.js";

describe("schemas", () => {
  it("exports each tool's input as JSON Schema (what the model sees)", () => {
    expect(toolSchemas()).toMatchSnapshot();
  });
});
