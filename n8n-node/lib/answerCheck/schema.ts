// The chain's JSON Schema: checked once against the meta-schema (a bad schema is the user's
// error, named by its field), then every answer validated against it. @cfworker/json-schema:
// no code generation (n8n's scanner refuses `new Function`), no dependencies of its own, a schema
// ready in tens of microseconds (scripts/bench-schema.mjs measured it beside ajv). It is copied
// into dist/vendor/json-schema by the build, so the package adds no runtime dependency.
import type * as JsonSchema from '@cfworker/json-schema';
import type { OutputUnit, Schema, SchemaDraft } from '@cfworker/json-schema';
import { DRAFT_07_META_SCHEMA } from './metaSchema';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Validator } = require('../../vendor/json-schema/index.js') as typeof JsonSchema;
type Validator = JsonSchema.Validator;

/** One validation error: a JSON pointer into the answer ("" for the root) and what is wrong. */
export interface SchemaError {
	path: string;
	message: string;
}

/** Keywords whose error only says a child failed; the child's own error says what. */
const SUMMARIES = new Set([
	'properties',
	'patternProperties',
	'items',
	'prefixItems',
	'allOf',
	'$ref',
	'$dynamicRef',
	'dependentSchemas',
	'false',
]);

/** Errors kept on an item (a schema miss can list every field of a long answer). */
export const MAX_ERRORS = 20;

const DRAFTS: Record<string, SchemaDraft> = {
	'http://json-schema.org/draft-04/schema': '4',
	'http://json-schema.org/draft-07/schema': '7',
	'https://json-schema.org/draft/2019-09/schema': '2019-09',
	'https://json-schema.org/draft/2020-12/schema': '2020-12',
};

const metaValidator = new Validator(DRAFT_07_META_SCHEMA as unknown as Schema, '7', false);

export class AnswerSchema {
	private readonly validator: Validator;

	/** Throws an Error saying what is wrong with the schema (the caller names the field). */
	constructor(readonly schema: Schema) {
		if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
			throw new Error('must be a JSON object (a JSON Schema)');
		const meta = metaValidator.validate(schema);
		if (!meta.valid) {
			// The deepest error names the keyword at fault; the ones above it only say a child failed.
			const e = meta.errors.reduce((a, b) =>
				b.instanceLocation.length > a.instanceLocation.length ? b : a,
			);
			throw new Error(
				`is not a valid JSON Schema: ${pointer(e.instanceLocation) || '/'} ${e.error}`,
			);
		}
		const declared = typeof schema.$schema === 'string' ? schema.$schema.replace(/#$/, '') : '';
		this.validator = new Validator(schema, DRAFTS[declared] ?? '2020-12', false);
		// A $ref that points nowhere throws only when an answer reaches it: find it now, so a
		// broken schema fails the node, not the hundredth item.
		const missing = unresolvedRef(schema);
		if (missing) throw new Error(`is not a valid JSON Schema: "$ref": "${missing}" points nowhere`);
	}

	/** What is wrong with `value` (empty: it satisfies the schema). */
	check(value: unknown): SchemaError[] {
		const r = this.validator.validate(value);
		if (r.valid) return [];
		return leaves(r.errors)
			.slice(0, MAX_ERRORS)
			.map((e) => ({ path: pointer(e.instanceLocation), message: e.error }));
	}
}

/** The first local `$ref` ("#/…", "#") of `schema` that resolves to nothing in it. Remote refs
 * are not fetched by the validator either; they fail as any unresolved one would. */
function unresolvedRef(schema: Schema): string | undefined {
	const resolves = (ref: string) => {
		if (!ref.startsWith('#')) return false;
		let at: unknown = schema;
		for (const raw of ref.slice(1).split('/').slice(1)) {
			const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
			if (at === null || typeof at !== 'object' || !(key in (at as object))) return false;
			at = (at as Record<string, unknown>)[key];
		}
		return true;
	};
	const walk = (v: unknown): string | undefined => {
		if (v === null || typeof v !== 'object') return undefined;
		for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
			if (k === '$ref' && typeof child === 'string' && !resolves(child)) return child;
			const found = walk(child);
			if (found) return found;
		}
		return undefined;
	};
	return walk(schema);
}

function leaves(errors: OutputUnit[]): OutputUnit[] {
	const kept = errors.filter((e) => !SUMMARIES.has(e.keyword));
	return kept.length ? kept : errors;
}

/** '#/a/0' → '/a/0'; '#' → ''. */
function pointer(location: string): string {
	return location.replace(/^#/, '');
}

/** The schema a panel field holds (JSON text or an object), or undefined when it is empty.
 * Throws an Error saying what is wrong; the caller names the field. */
export function readSchema(raw: unknown): AnswerSchema | undefined {
	if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === ''))
		return undefined;
	let value: unknown = raw;
	if (typeof raw === 'string') {
		try {
			value = JSON.parse(raw);
		} catch (e) {
			throw new Error(`is not JSON: ${(e as Error).message}`);
		}
	}
	return new AnswerSchema(value as Schema);
}
