import type { JsonSchema, Schema } from './schema.js';

export const redacted = '<redacted>';

/**
 * `value` with every value its schema marks secret (`s.secret()`, `writeOnly` in the JSON Schema)
 * replaced by `<redacted>`, for logs and printed configs. Decided by the schema, never by key names:
 * a `tokens` section is shown, a `password` the schema does not mark would be too (mark it).
 */
export function redactSecrets(schema: Schema<unknown> | JsonSchema, value: unknown): unknown {
  const json = typeof (schema as Schema<unknown>).jsonSchema === 'function' ? (schema as Schema<unknown>).jsonSchema() : schema;
  return walk(json as JsonSchema, value);
}

function walk(schema: JsonSchema | undefined, value: unknown): unknown {
  if (!schema || value === undefined) return value;
  if (schema.writeOnly === true) return redacted;
  // A union: any alternative marking the value secret wins; nested shapes follow the first map-like one.
  const alternatives = [...((schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[])];
  if (alternatives.some((alt) => alt.writeOnly === true)) return redacted;
  if (Array.isArray(value)) {
    const items = (schema.items ?? alternatives.find((alt) => alt.items)?.items) as JsonSchema | undefined;
    return value.map((item) => walk(items, item));
  }
  if (value !== null && typeof value === 'object') {
    const shape = schema.properties ? schema : (alternatives.find((alt) => alt.properties || alt.additionalProperties) ?? schema);
    const properties = (shape.properties ?? {}) as Record<string, JsonSchema>;
    const rest = typeof shape.additionalProperties === 'object' ? (shape.additionalProperties as JsonSchema) : undefined;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(properties[key] ?? rest, item)]));
  }
  return value;
}
