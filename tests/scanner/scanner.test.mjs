// n8n's own package scanner over the packed tarball: prints its findings grouped by rule and fails
// on any finding not in tests/scanner/allowed-findings.json (each there with its reason; "stays:"
// ones are listed in README's compatibility section, "to fix:" ones are owed by the code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, parseStylish, scan, unpackedTarball } from './findings.mjs';

const allowed = JSON.parse(readFileSync(join(ROOT, 'tests/scanner/allowed-findings.json'), 'utf8'));
const key = (f) => `${f.file} | ${f.rule} | ${f.message}`;

test('the stylish parser reads a report and refuses a line it does not know', () => {
	const text =
		"/p/dist/a.js\n  3:1  error  Use of restricted global 'process' is not allowed  @n8n/x/no-restricted-globals\n\n✖ 1 problem (1 error, 0 warnings)\n";
	assert.deepEqual(parseStylish(text, '/p'), [
		{
			file: 'dist/a.js',
			rule: '@n8n/x/no-restricted-globals',
			message: "Use of restricted global 'process' is not allowed",
		},
	]);
	assert.throws(() => parseStylish('/p/a.js\n  garbage\n', '/p'), /not understood/);
});

test('every allowed finding carries a reason, "stays:" or "to fix:"', () => {
	for (const a of allowed) assert.match(a.reason, /^(stays|to fix): \S/, key(a));
});

test("README's compatibility section lists exactly the findings that stay", () => {
	const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
	const block = /<!-- scanner-allowed:start -->([\s\S]*?)<!-- scanner-allowed:end -->/.exec(readme);
	assert.ok(block, 'README has the scanner-allowed block');
	const listed = [...block[1].matchAll(/^- `([^`]+)` in `([^`]+)`/gm)].map(
		(m) => `${m[2]} | ${m[1]}`,
	);
	const stays = allowed
		.filter((a) => a.reason.startsWith('stays:'))
		.map((a) => `${a.file} | ${a.rule.split('/').pop()}`);
	assert.deepEqual([...new Set(listed)].sort(), [...new Set(stays)].sort());
});

test(
	"n8n's scanner on the packed tarball finds nothing outside the allow-list",
	{ timeout: 300_000 },
	async () => {
		const findings = await scan(unpackedTarball());
		const byRule = {};
		for (const f of findings) (byRule[f.rule] ??= []).push(f);
		for (const [rule, list] of Object.entries(byRule)) {
			console.log(`${rule}: ${list.length}`);
			for (const f of list) console.log(`  ${f.file}: ${f.message}`);
		}
		const counts = new Map();
		for (const f of findings) counts.set(key(f), (counts.get(key(f)) ?? 0) + 1);
		const unexpected = [...counts].filter(
			([k, n]) => n > (allowed.find((a) => key(a) === k)?.count ?? 0),
		);
		assert.deepEqual(unexpected, [], 'scanner findings not in tests/scanner/allowed-findings.json');
		const gone = allowed.filter((a) => !counts.has(key(a))).map(key);
		// A fixed finding leaves the list with its fix, so README's list stays what the scanner says.
		assert.deepEqual(gone, [], 'allowed but no longer found: remove from allowed-findings.json');
	},
);
