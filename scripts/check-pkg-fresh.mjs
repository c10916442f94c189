#!/usr/bin/env node
// Is the committed pkg/ (the WASM engine) built from the sources in this checkout? Decided by
// content, never by file times: a fresh clone leaves every file with the checkout's time.
//   node scripts/check-pkg-fresh.mjs           exit 1, naming the fix, if pkg/ is stale
//   node scripts/check-pkg-fresh.mjs --quiet   the same, silent (scripts/build-node.sh)
//   node scripts/check-pkg-fresh.mjs --write   record the inputs (scripts/build-wasm.sh)
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RECORD = 'pkg/SOURCE_HASH';

/** The engine's build inputs, repository-relative, sorted. src/bin/ holds programs (the
 * simulator), not the library wasm-pack builds, so it is left out. */
export function buildInputs(root = ROOT) {
	const walk = (dir) =>
		readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
			const rel = `${dir}/${e.name}`;
			if (e.isDirectory()) return rel === 'src/bin' ? [] : walk(rel);
			return /\.rs$/.test(e.name) || (dir === 'src' && /\.d\.ts$/.test(e.name)) ? [rel] : [];
		});
	return [...walk('src'), 'Cargo.toml', 'Cargo.lock', 'scripts/build-wasm.sh'].sort();
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** One line per input (`<sha256>  <path>`) and a total over those lines. */
export function sourceHash(root = ROOT) {
	const files = buildInputs(root).map((f) => `${sha256(readFileSync(path.join(root, f)))}  ${f}`);
	return { total: sha256(files.join('\n')), files };
}

function render({ total, files }) {
	return [
		'# The engine sources pkg/ was built from (scripts/check-pkg-fresh.mjs; written by scripts/build-wasm.sh).',
		`total ${total}`,
		...files,
		'',
	].join('\n');
}

function main(args) {
	const now = sourceHash();
	const file = path.join(ROOT, RECORD);
	if (args.includes('--write')) {
		writeFileSync(file, render(now));
		return 0;
	}
	const stored = existsSync(file) ? readFileSync(file, 'utf8') : '';
	if (stored.includes(`total ${now.total}\n`)) {
		if (!args.includes('--quiet'))
			console.error(`pkg/ matches its sources (${now.total.slice(0, 12)})`);
		return 0;
	}
	if (!args.includes('--quiet')) {
		const before = new Set(stored.split('\n'));
		const changed = now.files.filter((l) => !before.has(l)).map((l) => l.split('  ')[1]);
		console.error(
			`pkg/ is stale: ${stored ? `changed since its build: ${changed.join(', ') || 'the list of inputs'}` : `${RECORD} is missing`}.\n` +
				'Fix: bash scripts/build-wasm.sh (needs Rust; it rewrites pkg/ and pkg/SOURCE_HASH), then commit pkg/.',
		);
	}
	return 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]))
	process.exit(main(process.argv.slice(2)));
