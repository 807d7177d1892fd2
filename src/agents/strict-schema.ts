/**
 * A tool's JSON Schema rewritten for OpenAI's strict mode (structured outputs
 * for function calls), which accepts only a subset of JSON Schema: every
 * object closed (`additionalProperties: false`), every property listed in
 * `required`, and no `default` or string-length keywords. An optional argument
 * becomes a nullable one; the tools read `null` as "not given" (see
 * `withoutNullArguments`), and its default moves into the description so the
 * model still knows it.
 */

type JsonSchemaObject = Record<string, unknown>;

/** Keywords strict mode refuses; the zod schema still checks them when the call runs. */
const UNSUPPORTED = ["default", "minLength", "maxLength"] as const;

export function strictSchema(schema: JsonSchemaObject): JsonSchemaObject {
  return strictNode(schema) as JsonSchemaObject;
}

function strictNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictNode);
  if (typeof node !== "object" || node === null) return node;
  const source = node as JsonSchemaObject;
  const result: JsonSchemaObject = {};
  for (const [key, value] of Object.entries(source)) {
    if ((UNSUPPORTED as readonly string[]).includes(key)) continue;
    // zod's z.number().int() bound: the safe-integer limit says nothing to a model.
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === "properties" && typeof value === "object" && value !== null) {
      result.properties = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, child]) => [name, strictNode(child)]),
      );
      continue;
    }
    result[key] = strictNode(value);
  }
  if ("default" in source && source.default !== undefined) {
    const note = `Default: ${JSON.stringify(source.default)}.`;
    const text = typeof result.description === "string" ? result.description.trimEnd() : "";
    result.description = text === "" ? note : `${text}${/[.!?]$/.test(text) ? "" : "."} ${note}`;
  }
  if (source.type === "object" || "properties" in source) closeObject(source, result);
  return result;
}

function closeObject(source: JsonSchemaObject, result: JsonSchemaObject): void {
  const properties = (result.properties ?? {}) as Record<string, JsonSchemaObject>;
  const required = new Set(Array.isArray(source.required) ? (source.required as string[]) : []);
  for (const [name, property] of Object.entries(properties)) {
    if (!required.has(name)) properties[name] = nullable(property);
  }
  result.properties = properties;
  result.required = Object.keys(properties);
  result.additionalProperties = false;
}

/** The property with `null` allowed: in `type` (and `enum`) where it has one, else as an `anyOf` branch. */
function nullable(property: JsonSchemaObject): JsonSchemaObject {
  const { type } = property;
  if (typeof type === "string" || Array.isArray(type)) {
    const types = Array.isArray(type) ? (type as unknown[]) : [type];
    const result: JsonSchemaObject = { ...property, type: types.includes("null") ? types : [...types, "null"] };
    if (Array.isArray(property.enum) && !property.enum.includes(null)) result.enum = [...property.enum, null];
    return result;
  }
  const { description, ...rest } = property;
  return {
    anyOf: [rest, { type: "null" }],
    ...(description === undefined ? {} : { description }),
  };
}
