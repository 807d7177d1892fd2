#!/usr/bin/env node
/**
 * Fails on import cycles under src/, so the layering (core is a leaf, backends
 * and the gateway server do not reach back into each other) cannot erode one
 * import at a time. Two checks:
 *
 *   - module level: any cycle of relative imports between .ts files, type-only
 *     imports included (a type cycle still ties the two modules' designs together);
 *   - folder level: any cycle between top-level folders of the root (e.g.
 *     gateway -> backends -> gateway). The root's index.ts and cli/ are the
 *     composition points and may import anything, so their imports are left out
 *     of this check (not out of the module-level one).
 *
 * Dynamic `import()` is lazy and does not count. Imports are read with the
 * TypeScript parser (already a dev dependency), which sees the syntax exactly
 * where a regex would trip over comments and template strings.
 *
 * Usage: node scripts/check-cycles.mjs [rootDir]   (default: src/ next to this script)
 * Exit code 0 when there is no cycle, 1 with the cycles printed otherwise.
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** Imports of these (relative to the root) are left out of the folder-level check. */
const FOLDER_CHECK_EXEMPT = ["index.ts", "cli"];

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "src"));
if (!existsSync(root) || !statSync(root).isDirectory()) {
  console.error(`check-cycles: ${root} is not a directory`);
  process.exit(2);
}

const files = listTsFiles(root);
/** file (relative to root, "/"-separated) -> files it imports */
const graph = new Map(files.map((file) => [file, importsOf(file)]));

const moduleCycles = findCycles(graph);
const folderEdges = folderGraph(graph);
const folderCycles = findCycles(new Map([...folderEdges].map(([folder, targets]) => [folder, [...targets.keys()]])));

for (const cycle of moduleCycles) console.error(`module cycle: ${cycle.join(" -> ")}`);
for (const cycle of folderCycles) {
  const steps = cycle
    .slice(0, -1)
    .map((from, i) => `  ${from} -> ${cycle[i + 1]} (${folderEdges.get(from).get(cycle[i + 1])})`);
  console.error(`folder cycle: ${cycle.join(" -> ")}\n${steps.join("\n")}`);
}
if (moduleCycles.length + folderCycles.length > 0) {
  console.error(
    `check-cycles: ${moduleCycles.length} module cycle(s), ${folderCycles.length} folder cycle(s) under ${relative(process.cwd(), root) || "."}`,
  );
  process.exit(1);
}
console.log(`check-cycles: no import cycles among ${files.length} files under ${relative(process.cwd(), root) || "."}`);

function listTsFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listTsFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".ts")) found.push(toKey(path));
  }
  return found.sort();
}

function toKey(path) {
  return relative(root, path).split(sep).join("/");
}

/** The files under root that `file` imports statically (import, import type, export … from, import x = require). */
function importsOf(file) {
  const path = join(root, file);
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const targets = new Set();
  for (const statement of source.statements) {
    let specifier;
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifier = statement.moduleSpecifier.text;
    } else if (
      ts.isImportEqualsDeclaration(statement) &&
      ts.isExternalModuleReference(statement.moduleReference) &&
      ts.isStringLiteral(statement.moduleReference.expression)
    ) {
      specifier = statement.moduleReference.expression.text;
    }
    if (specifier === undefined || !specifier.startsWith(".")) continue;
    const target = resolveImport(dirname(path), specifier);
    if (target !== undefined) targets.add(target);
  }
  return [...targets];
}

/** NodeNext style: "./x.js" means ./x.ts; a bare "./x" or "./dir" is tried as .ts and /index.ts too. */
function resolveImport(fromDir, specifier) {
  const base = resolve(fromDir, specifier);
  const candidates = [base.replace(/\.(m|c)?js$/, ".$1ts"), base, `${base}.ts`, join(base, "index.ts")];
  for (const candidate of candidates) {
    if (candidate.endsWith(".ts") && existsSync(candidate) && statSync(candidate).isFile()) {
      const key = toKey(candidate);
      return key.startsWith("..") ? undefined : key;
    }
  }
  return undefined;
}

function folderOf(file) {
  const slash = file.indexOf("/");
  return slash < 0 ? undefined : file.slice(0, slash);
}

/** folder -> (folder it imports -> one example import, for the message) */
function folderGraph(moduleGraph) {
  const edges = new Map();
  for (const [file, targets] of moduleGraph) {
    const from = folderOf(file);
    if (from === undefined || FOLDER_CHECK_EXEMPT.includes(file) || FOLDER_CHECK_EXEMPT.includes(from)) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    for (const target of targets) {
      const to = folderOf(target);
      if (to === undefined || to === from || edges.get(from).has(to)) continue;
      edges.get(from).set(to, `${file} imports ${target}`);
    }
  }
  return edges;
}

/**
 * One cycle per strongly connected component (Tarjan), each written as a path
 * that ends where it starts; a component is reported once however many loops it holds.
 */
function findCycles(g) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const cycles = [];
  let next = 0;

  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of g.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node), index.get(target)));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = new Set();
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.add(member);
    } while (member !== node);
    const selfLoop = (g.get(node) ?? []).includes(node);
    if (component.size > 1 || selfLoop) cycles.push(cycleWithin(g, component));
  };

  for (const node of [...g.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The shortest path from the component's first node back to itself (breadth-first). */
function cycleWithin(g, component) {
  const start = [...component].sort()[0];
  const previous = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const target of g.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)) path.splice(1, 0, at);
        path.push(start);
        return path;
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
