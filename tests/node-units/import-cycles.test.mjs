// The node's TypeScript imports no module in a circle (one was: itemView.ts <-> itemLoop.ts, for
// a type): a circle means neither module can be read, tested or moved alone. Type-only imports
// count too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../n8n-node');

function* tsFiles(dir) {
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, entry.name);
		if (entry.isDirectory()) yield* tsFiles(p);
		else if (entry.name.endsWith('.ts')) yield p;
	}
}

/** Each file's relative imports, resolved to files. */
function graph() {
	const g = new Map();
	for (const file of tsFiles(SOURCES)) {
		const deps = [];
		for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
			const p = path.resolve(path.dirname(file), m[1]);
			const found = [`${p}.ts`, path.join(p, 'index.ts')].find((c) => existsSync(c));
			if (found) deps.push(found);
		}
		g.set(file, deps);
	}
	return g;
}

function cycles(g) {
	const state = new Map();
	const stack = [];
	const found = [];
	const visit = (u) => {
		state.set(u, 'open');
		stack.push(u);
		for (const v of g.get(u) ?? []) {
			if (state.get(v) === 'open') found.push([...stack.slice(stack.indexOf(v)), v]);
			else if (!state.has(v)) visit(v);
		}
		stack.pop();
		state.set(u, 'done');
	};
	for (const u of g.keys()) if (!state.has(u)) visit(u);
	return found;
}

test('the check finds a circle where there is one', () => {
	const a = 'a.ts';
	const b = 'b.ts';
	assert.equal(
		cycles(
			new Map([
				[a, [b]],
				[b, [a]],
			]),
		).length,
		1,
	);
	assert.equal(
		cycles(
			new Map([
				[a, [b]],
				[b, []],
			]),
		).length,
		0,
	);
});

test('n8n-node/ imports no module in a circle', () => {
	const g = graph();
	assert.ok(g.size > 80, `${g.size} files`);
	const rel = (f) => path.relative(SOURCES, f);
	assert.deepEqual(
		cycles(g).map((c) => c.map(rel).join(' -> ')),
		[],
	);
});
