#!/usr/bin/env node
// Benchmark (prints figures; asserts nothing): two JSON Schema validators for checking an LLM's
// answer, in one Node process on the same schema and answers: ajv 8 (code generation through
// `new Function`; ajv/dist/2020 for draft 2020-12, plain ajv for draft-07) and
// @cfworker/json-schema (an interpreter: no eval, no Function). Prints compile time, time per
// validation of a valid and of an invalid answer, the errors each gives for the invalid answer
// (all of them: ajv allErrors, cfworker shortCircuit=false), and how each treats invalid schemas.
//   node scripts/bench-schema.mjs [--from <dir>]
// <dir> is where both packages resolve from. Default: a scratch install under ~/.cache (ajv
// 8.20.0 and @cfworker/json-schema 4.1.6 from the npm registry, made on the first run; this
// repository's own ajv is eslint's ajv 6, too old).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BRIEF, BRIEF_SCHEMA } from '../tests/support/brief20.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRATCH = path.join(os.homedir(), '.cache/n8n-nodes-resilient-provider-call/bench-schema');
const { values: args } = parseArgs({ options: { from: { type: 'string', default: SCRATCH } } });
const FROM = path.resolve(args.from);
if (FROM === SCRATCH && !existsSync(path.join(SCRATCH, 'node_modules/ajv/package.json'))) {
	mkdirSync(SCRATCH, { recursive: true });
	writeFileSync(path.join(SCRATCH, 'package.json'), '{"private":true}\n');
	execFileSync(
		'npm',
		['install', '--no-audit', '--no-fund', 'ajv@8.20.0', '@cfworker/json-schema@4.1.6'],
		{ cwd: SCRATCH, stdio: 'inherit' },
	);
}
const COMPILES = 50;
const RUNS = 5;
const N = 10_000;

const require = createRequire(path.join(FROM, 'noop.js'));
const version = (name) => require(`${name}/package.json`).version;
const ajvVersion = version('ajv');
if (Number(ajvVersion.split('.')[0]) < 8) {
	console.error(`ajv ${ajvVersion} resolves from ${FROM}; this needs ajv 8 (pass --from <dir>)`);
	process.exit(2);
}
const cfVersion = version('@cfworker/json-schema');
const def = (mod) => mod.default ?? mod;
const Ajv2020 = def(require('ajv/dist/2020'));
const Ajv7 = def(require('ajv'));
const { Validator } = require('@cfworker/json-schema');

const SCHEMA = BRIEF_SCHEMA;
const VALID = BRIEF;
const SCHEMA_07 = { ...SCHEMA, $schema: 'http://json-schema.org/draft-07/schema#' };

// Three faults: a string too short, a nested object missing a required field, an extra field.
const { email: _omitted, ...authorWithoutEmail } = VALID.author;
const INVALID = { ...VALID, title: '', author: authorWithoutEmail, notes: 'extra' };

// ---- the contenders ----------------------------------------------------------------------------
const ajvCase = (label, Ajv, schema) => ({
	label,
	schema,
	newCompiler: () => new Ajv({ allErrors: true }),
	compile: (ajv, s) => ajv.compile(s),
	// ajv caches each compiled schema by object identity: a fresh object per call grows the cache.
	release: (ajv, s) => ajv.removeSchema(s),
	validate: (v, x) => v(x),
	errors: (v, x) =>
		v(x)
			? []
			: v.errors.map(
					(e) =>
						`${e.instancePath || '/'}  ${e.keyword}: ${e.message}` +
						(e.keyword === 'additionalProperties' ? ` (${e.params.additionalProperty})` : ''),
				),
});
const CASES = [
	ajvCase(`ajv ${ajvVersion} 2020-12`, Ajv2020, SCHEMA),
	ajvCase(`ajv ${ajvVersion} draft-07`, Ajv7, SCHEMA_07),
	{
		label: `cfworker ${cfVersion} 2020-12`,
		schema: SCHEMA,
		newCompiler: () => null,
		compile: (_, s) => new Validator(s, '2020-12', false),
		release: () => {},
		validate: (v, x) => v.validate(x).valid,
		errors: (v, x) =>
			v.validate(x).errors.map((e) => `${e.instanceLocation}  ${e.keyword}: ${e.error}`),
	},
];

// ---- measuring ---------------------------------------------------------------------------------
const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
let sink = 0;

/** µs per compile of a fresh copy of the schema: [first in this process, median of COMPILES]. */
function compileTimes(c, freshCompiler) {
	const times = [];
	let shared = c.newCompiler();
	for (let i = 0; i < COMPILES; i++) {
		const s = structuredClone(c.schema);
		const t0 = performance.now();
		const compiler = freshCompiler ? c.newCompiler() : shared;
		const v = c.compile(compiler, s);
		times.push((performance.now() - t0) * 1000);
		sink += typeof v === 'function' ? 1 : 0;
		c.release(compiler, s);
		if (freshCompiler) shared = compiler;
	}
	return { first: times[0], median: median(times) };
}

/** µs per validation: median of RUNS runs of N validations (after one warm-up run). */
function validateTime(c, v, answer) {
	const run = () => {
		const t0 = performance.now();
		for (let i = 0; i < N; i++) sink += c.validate(v, answer) ? 1 : 0;
		return ((performance.now() - t0) * 1000) / N;
	};
	run();
	return median(Array.from({ length: RUNS }, run));
}

const rows = [];
const errorLists = [];
for (const c of CASES) {
	const compiled = c.compile(c.newCompiler(), structuredClone(c.schema));
	if (!c.validate(compiled, VALID) || c.validate(compiled, INVALID))
		throw new Error(`${c.label}: the valid answer fails or the invalid one passes`);
	const reused = compileTimes(c, false);
	const fresh = c.newCompiler() ? compileTimes(c, true) : null;
	rows.push([
		c.label,
		reused.first,
		reused.median,
		fresh ? fresh.median : null,
		validateTime(c, compiled, VALID),
		validateTime(c, compiled, INVALID),
	]);
	errorLists.push([c.label, c.errors(compiled, INVALID)]);
}

const fmt = (x) => (x === null ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(2));
const table = (head, body) => {
	const all = [head, ...body];
	const w = head.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
	for (const r of all)
		console.log(
			r.map((x, i) => (i ? String(x).padStart(w[i]) : String(x).padEnd(w[i]))).join('  '),
		);
};

console.log(`Node ${process.version}; packages from ${FROM}`);
console.log(
	`compile: µs per compile of a fresh copy of the 20-field schema (first in process; median of ${COMPILES})`,
);
console.log(`validate: µs per validation, median of ${RUNS} runs of ${N}`);
console.log('');
table(
	[
		'validator',
		'1st compile',
		'compile',
		'new instance+compile',
		'validate ok',
		'validate bad (3 faults)',
	],
	rows.map(([label, ...xs]) => [label, ...xs.map(fmt)]),
);
console.log('');
console.log('Errors for the invalid answer (title "", author without email, extra "notes"):');
for (const [label, list] of errorLists) {
	console.log(`  ${label}: ${list.length} errors`);
	for (const e of list) console.log(`    ${e}`);
}

// ---- invalid schemas ---------------------------------------------------------------------------
// cfworker ships no meta-schemas and checks none; checking by hand means validating the schema
// against a meta-schema with cfworker itself. The meta-schema files are ajv's copies here
// (a package would carry its own). cfworker knows $recursiveRef (2019-09), not $dynamicRef
// (2020-12): against the 2020-12 meta-schema only the top level of a schema is checked.
const refs = path.join(path.dirname(require.resolve('ajv/package.json')), 'dist/refs');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
function metaValidator(draft, dir) {
	const v = new Validator(readJson(path.join(refs, dir, 'schema.json')), draft, false);
	for (const f of readdirSync(path.join(refs, dir, 'meta')))
		v.addSchema(readJson(path.join(refs, dir, 'meta', f)));
	return v;
}
const META = [
	['meta 2019-09', metaValidator('2019-09', 'json-schema-2019-09')],
	['meta 2020-12', metaValidator('2020-12', 'json-schema-2020-12')],
];
{
	const meta = META[0][1];
	if (!meta.validate(SCHEMA).valid)
		throw new Error('the 20-field schema fails the 2019-09 meta-schema');
	const times = Array.from({ length: COMPILES }, () => {
		const t0 = performance.now();
		sink += meta.validate(structuredClone(SCHEMA)).valid ? 1 : 0;
		return (performance.now() - t0) * 1000;
	});
	console.log('');
	console.log(
		`cfworker check of the 20-field schema against the 2019-09 meta-schema: ${fmt(median(times))} µs (median of ${COMPILES})`,
	);
}
// cfworker's leaf errors only (it also lists every enclosing subschema that failed).
const WRAPPERS = /subschema had errors|does not match|do not match|match (any|all)/;

const BAD_SCHEMAS = [
	{ type: 12 },
	{ type: 'object', properties: { a: { minimum: 'x' } } },
	{ type: 'object', required: 'a' },
	{ type: 'object', properties: { a: { type: 'object', properties: { b: { minLength: -1 } } } } },
	{ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
	// Valid schemas that ajv's default strict mode refuses:
	{ type: 'object', properties: { a: { type: 'string', format: 'email' } } },
	{ type: 'object', properties: { a: { type: 'string', example: 'x' } } },
];
const attempt = (fn) => {
	try {
		return fn();
	} catch (e) {
		return `throws: ${e.message.split('\n')[0]}`;
	}
};
console.log('');
console.log('Invalid schemas (and two valid ones ajv strict mode refuses):');
for (const schema of BAD_SCHEMAS) {
	console.log(`  ${JSON.stringify(schema)}`);
	const ajv = new Ajv2020({ allErrors: true });
	console.log(`    ajv compile:         ${attempt(() => (ajv.compile(schema), 'compiles'))}`);
	const checker = new Ajv2020({ allErrors: true });
	const ok = checker.validateSchema(schema);
	console.log(
		`    ajv validateSchema:  ${ok ? 'valid' : checker.errors.map((e) => `${e.instancePath} ${e.message}`).join('; ')}`,
	);
	const made = attempt(() => new Validator(schema, '2020-12', false));
	console.log(`    cfworker new:        ${typeof made === 'string' ? made : 'constructs'}`);
	if (typeof made !== 'string')
		for (const answer of [{}, { a: 5 }])
			console.log(
				`    cfworker ${JSON.stringify(answer).padEnd(7)}:    ${attempt(() => {
					const r = made.validate(answer);
					return r.valid ? 'valid' : r.errors.map((e) => e.error).join('; ');
				})}`,
			);
	for (const [label, meta] of META) {
		const r = meta.validate(schema);
		const leaves = r.errors.filter((e) => !WRAPPERS.test(e.error));
		console.log(
			`    cfworker ${label}: ${r.valid ? 'valid' : leaves.map((e) => `${e.instanceLocation} ${e.error}`).join('; ')}`,
		);
	}
}
if (sink === -1) console.log(sink);
