// A JSON Schema (draft 2020-12) checker for the subset docs/reference/json-schema.json uses. Not
// ajv: the tests run with the packages package-lock.json installs, and ajv is not one of them;
// this is small enough to read (docs/reference/json-schema.md). A keyword outside the subset is
// an error, never silently passed over; json-schema.test.ts also runs Python's jsonschema (a full
// implementation) on the same documents when it is installed.

type Schema = boolean | { [keyword: string]: unknown };

/** Keywords this checker applies; the others it knows are annotations only. */
const APPLIED = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'pattern',
  'minimum',
  'maximum',
  'anyOf',
  'allOf',
]);
const ANNOTATIONS = new Set(['$schema', '$id', '$defs', 'title', 'description']);

/** Every error found in `value` against `schema` ($refs resolved in `root`), as "path: what". */
export function validate(root: Schema, schema: Schema, value: unknown, path = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value is allowed here`];
  for (const keyword of Object.keys(schema)) {
    if (!APPLIED.has(keyword) && !ANNOTATIONS.has(keyword)) throw new Error(`json-schema: unsupported "${keyword}"`);
  }
  const errors: string[] = [];
  const s = schema as Record<string, any>;
  if (s.$ref !== undefined) errors.push(...validate(root, resolve(root, s.$ref), value, path));
  if (s.type !== undefined) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((type) => hasType(value, type)))
      errors.push(`${path}: ${show(value)} is not ${types.join(' or ')}`);
  }
  if (s.enum !== undefined && !s.enum.some((allowed: unknown) => same(allowed, value)))
    errors.push(`${path}: ${show(value)} is not one of ${JSON.stringify(s.enum)}`);
  if (s.const !== undefined && !same(s.const, value)) errors.push(`${path}: ${show(value)} is not ${show(s.const)}`);
  if (typeof value === 'string' && s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(value))
    errors.push(`${path}: ${show(value)} does not match ${s.pattern}`);
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) errors.push(`${path}: ${value} < ${s.minimum}`);
    if (s.maximum !== undefined && value > s.maximum) errors.push(`${path}: ${value} > ${s.maximum}`);
  }
  if (isObject(value)) {
    for (const name of s.required ?? []) if (!Object.hasOwn(value, name)) errors.push(`${path}: no "${name}"`);
    for (const [name, field] of Object.entries(value)) {
      const own = s.properties?.[name];
      if (own !== undefined) errors.push(...validate(root, own, field, `${path}.${name}`));
      else if (s.additionalProperties !== undefined)
        errors.push(...validate(root, s.additionalProperties, field, `${path}.${name}`));
    }
  }
  if (Array.isArray(value) && s.items !== undefined) {
    value.forEach((item, i) => errors.push(...validate(root, s.items, item, `${path}[${i}]`)));
  }
  for (const part of s.allOf ?? []) errors.push(...validate(root, part, value, path));
  if (s.anyOf !== undefined) {
    const tries = (s.anyOf as Schema[]).map((part) => validate(root, part, value, path));
    if (!tries.some((found) => found.length === 0)) {
      const closest = tries.reduce((best, found) => (found.length < best.length ? found : best));
      errors.push(`${path}: matches none of anyOf; the closest: ${closest.join('; ')}`);
    }
  }
  return errors;
}

/** A "#/…" JSON pointer into `root`. */
function resolve(root: Schema, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`json-schema: only local $refs: ${ref}`);
  let target: any = root;
  for (const part of ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (target === undefined) throw new Error(`json-schema: no ${ref}`);
  return target as Schema;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      throw new Error(`json-schema: unknown type ${type}`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const show = (value: unknown) => JSON.stringify(value)?.slice(0, 80) ?? String(value);
