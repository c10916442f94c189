#!/usr/bin/env node
// Words a user reads name incidents by what happened (docs/incidents.md), never by an internal
// number ("seed 000"): README, docs/, n8n-node/, scenarios/ (contents and file names) and the
// simulator's --help. Exit 1 listing every hit.
//   node scripts/check-words.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BANNED = /seed ?0[0-9][0-9]/i;
const PLACES = ['README.md', 'docs', 'n8n-node', 'scenarios'];

const files = (rel) =>
	statSync(path.join(ROOT, rel)).isDirectory()
		? readdirSync(path.join(ROOT, rel)).flatMap((n) => files(`${rel}/${n}`))
		: [rel];

const hits = [];
for (const file of PLACES.flatMap(files)) {
	if (BANNED.test(file)) hits.push(`${file}: in its name`);
	readFileSync(path.join(ROOT, file), 'utf8')
		.split('\n')
		.forEach((line, i) => BANNED.test(line) && hits.push(`${file}:${i + 1}: ${line.trim()}`));
}

// The simulator's --help: built only where Rust is (a Node-only checkout checks the rest).
const simulate = path.join(ROOT, 'target/release/simulate');
if (spawnSync('cargo', ['--version']).status === 0)
	execFileSync(
		'cargo',
		['build', '--release', '--quiet', '--locked', '-p', 'resilient-simulator'],
		{
			cwd: ROOT,
			stdio: 'inherit',
		},
	);
if (existsSync(simulate)) {
	execFileSync(simulate, ['--help'])
		.toString()
		.split('\n')
		.forEach((line) => BANNED.test(line) && hits.push(`simulate --help: ${line.trim()}`));
} else console.error('check-words: no target/release/simulate (no cargo): --help not checked');

if (hits.length) {
	console.error(
		`Internal incident numbers in user-facing text (name the incident instead, see docs/incidents.md):\n  ${hits.join('\n  ')}`,
	);
	process.exit(1);
}
console.error(
	'check-words: no "seed NNN" in README, docs/, n8n-node/, scenarios/ or simulate --help',
);
