// docs/architecture.md lists every export of the engine's boundary, read here from the
// generated pkg/engine.d.ts; and each engine method a docs page names in backticks as a
// crossing exists (a profile table once listed exports long gone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const dts = readFileSync(new URL('pkg/engine.d.ts', root), 'utf8');

/** Methods of `export class Name { ... }` in the .d.ts (the constructor and symbols aside). */
function methods(cls) {
	const body = dts.match(new RegExp(`export class ${cls} \\{([\\s\\S]*?)\\n\\}`))?.[1];
	assert.ok(body, `class ${cls} in pkg/engine.d.ts`);
	return [...body.matchAll(/^ {4}(?:static )?([a-zA-Z]\w*)\(/gm)]
		.map((m) => m[1])
		.filter((m) => m !== 'constructor')
		.sort();
}

test("docs/architecture.md lists the boundary's exports exactly", () => {
	const doc = readFileSync(new URL('docs/architecture.md', root), 'utf8').replace(/\n\s*/g, ' ');
	for (const cls of ['Engine', 'Item']) {
		const listed = doc.match(new RegExp(`\`${cls}\`: ((?:\`\\w+\`,? ?)+)`))?.[1];
		assert.ok(listed, `docs/architecture.md lists ${cls}'s exports`);
		const names = [...listed.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
		assert.deepEqual(names, methods(cls), `${cls}: docs/architecture.md vs pkg/engine.d.ts`);
	}
});

test('every crossing a benchmarks table names is an export', () => {
	const all = new Set([...methods('Engine'), ...methods('Item')]);
	const doc = readFileSync(new URL('docs/benchmarks.md', root), 'utf8');
	const row = doc.split('\n').find((l) => l.startsWith('| engine crossings'));
	assert.ok(row, 'the profile table has its engine crossings row');
	const named = [...row.matchAll(/`(\w+)`/g)].map((m) => m[1]);
	assert.ok(named.length > 0);
	for (const n of named) assert.ok(all.has(n), `\`${n}\` in docs/benchmarks.md is not an export`);
});

test('docs/architecture.md names every free function of the boundary', () => {
	const doc = readFileSync(new URL('docs/architecture.md', root), 'utf8');
	const functions = [...dts.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]);
	assert.ok(functions.length >= 2, `free functions in pkg/engine.d.ts: ${functions}`);
	for (const f of functions) assert.ok(doc.includes(`\`${f}(`), `docs/architecture.md names ${f}`);
});
