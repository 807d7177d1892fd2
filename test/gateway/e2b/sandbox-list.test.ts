/**
 * Sandbox.list through the real SDK: the metadata, startedAfter and template
 * filters, `order`, and pages of `limit` followed by x-next-token.
 */

import { afterAll, beforeAll, expect, it } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../src/index.js";
import { api, startTestGateway, TOKEN } from "../helpers.js";

let gateway: Gateway;
let opts: SandboxOpts;
const ids: string[] = [];
let secondStarted: Date;

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 30_000 };
  for (let i = 0; i < 3; i++) {
    const box = await Sandbox.create({ ...opts, metadata: { suite: "list" } });
    ids.push(box.sandboxId);
    if (i === 1) secondStarted = (await box.getInfo()).startedAt;
  }
  await Sandbox.create({ ...opts, metadata: { suite: "other" } });
});
afterAll(async () => gateway?.close());

const listAll = async (query: Parameters<typeof Sandbox.list>[0]): Promise<string[][]> => {
  const paginator = Sandbox.list({ ...opts, ...query });
  const pages: string[][] = [];
  while (paginator.hasNext) pages.push((await paginator.nextItems()).map((s) => s.sandboxId));
  return pages;
};

it("pages by limit, in start order, with x-next-token", async () => {
  const list = { metadata: { suite: "list" } };
  expect(await listAll({ query: list, limit: 2, order: "asc" })).toEqual([ids.slice(0, 2), ids.slice(2)]);
  expect(await listAll({ query: list, order: "asc" })).toEqual([ids]);
});

it("orders newest first by default (openapi's desc), oldest first with order asc, pages following either", async () => {
  const newest = [...ids].reverse();
  expect(await listAll({ query: { metadata: { suite: "list" } } })).toEqual([newest]);
  expect(await listAll({ query: { metadata: { suite: "list" } }, order: "desc", limit: 2 })).toEqual([
    newest.slice(0, 2),
    newest.slice(2),
  ]);
  expect(await listAll({ query: { metadata: { suite: "list" } }, order: "asc", limit: 1 })).toEqual(
    ids.map((id) => [id]),
  );
});

it("filters by startedAfter and template", async () => {
  const after = await listAll({ query: { metadata: { suite: "list" }, startedAfter: secondStarted } });
  expect(after).toEqual([ids.slice(1).reverse()]);
  expect(await listAll({ query: { metadata: { suite: "list" }, template: "base" } })).toEqual([[...ids].reverse()]);
  expect(await listAll({ query: { metadata: { suite: "list" }, template: "other" } })).toEqual([[]]);
});

it("refuses a bad limit, startedAfter or nextToken by name", async () => {
  const headers = { "x-api-key": TOKEN };
  for (const [query, field] of [
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["startedAfter=yesterday", "startedAfter"],
    ["nextToken=nope", "nextToken"],
    ["order=sideways", "order"],
  ]) {
    const answer = await api(gateway, "GET", `/v2/sandboxes?${query}`, undefined, { token: null, headers });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain(field);
  }
});
