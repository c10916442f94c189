// Writes dist/engine/engine.js: wasm-bindgen's Node glue (pkg/engine.js) with the .wasm bytes
// inside it, so the package loads its engine without fs, path, __dirname or globalThis, which
// n8n's community-package scanner refuses. Each rewrite must match exactly once: a new
// wasm-bindgen that words its glue differently fails the build here instead of shipping a glue
// that still reads the file.
//   node scripts/embed-engine.mjs <pkg dir> <out file>
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [pkgDir = 'pkg', out = 'dist/engine/engine.js'] = process.argv.slice(2);
let glue = readFileSync(join(pkgDir, 'engine.js'), 'utf8');
const wasm = readFileSync(join(pkgDir, 'engine_bg.wasm'));

const rewrites = [
	{
		what: "the .wasm file's read",
		from: /const wasmPath = `\$\{__dirname\}\/engine_bg\.wasm`;\nconst wasmBytes = require\('fs'\)\.readFileSync\(wasmPath\);\n/,
		to:
			'// The engine, base64: decoded once, when the node first needs its engine.\n' +
			`const wasmBytes = Uint8Array.from(atob('${wasm.toString('base64')}'), (c) => c.charCodeAt(0));\n`,
	},
	{
		what: "getrandom's crypto",
		from: /globalThis\.crypto\.getRandomValues\(/,
		to: "require('crypto').getRandomValues(",
	},
];
for (const { what, from, to } of rewrites) {
	const hits = glue.match(new RegExp(from.source, 'g'))?.length ?? 0;
	if (hits !== 1) {
		console.error(
			`embed-engine: ${what} found ${hits} times in ${pkgDir}/engine.js (expected once)`,
		);
		process.exit(1);
	}
	glue = glue.replace(from, () => to);
}
for (const left of ['__dirname', 'globalThis', "require('fs')", "require('path')"])
	if (glue.includes(left)) {
		console.error(`embed-engine: ${left} is still in the glue`);
		process.exit(1);
	}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, glue);
console.error(`embed-engine: ${out} (${glue.length} bytes, the engine's ${wasm.length} inside)`);
