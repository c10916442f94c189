// The node's TypeScript as the source-reading tests see it: every line of code under n8n-node/
// (comments left out: a comment explains, it decides nothing) outside the file the engine
// generates (lib/engineConstants.ts, whose values are the engine's).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCES = path.join(ROOT, 'n8n-node');
const GENERATED = new Set(['lib/engineConstants.ts']);

function* tsFiles(dir) {
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, entry.name);
		if (entry.isDirectory()) yield* tsFiles(p);
		else if (entry.name.endsWith('.ts')) yield p;
	}
}

/** The TypeScript files read (relative to n8n-node/), and each code line as `{ at, line }`
 * (`at`: `n8n-node/<file>:<line>`). */
export function nodeSources() {
	const files = [];
	const lines = [];
	for (const file of tsFiles(SOURCES)) {
		const rel = path.relative(SOURCES, file).split(path.sep).join('/');
		if (GENERATED.has(rel)) continue;
		files.push(rel);
		readFileSync(file, 'utf8')
			.split('\n')
			.forEach((line, k) => {
				if (!/^\s*(\/\/|\*|\/\*)/.test(line)) lines.push({ at: `n8n-node/${rel}:${k + 1}`, line });
			});
	}
	return { files, lines };
}
