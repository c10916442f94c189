// Aggregates `twiggy top --format csv` of the engine's WASM (built with its function names kept)
// into docs/engine-size.md: bytes by engine folder, by engine module, by dependency crate.
//   node scripts/wasm-size-report.mjs <twiggy.csv> <names-kept.wasm> <shipped.wasm> <out.md> <command>
// Run through scripts/wasm-size-report.sh, which builds the inputs.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [csvPath, namedWasm, shippedWasm, outPath, command] = process.argv.slice(2);
if (!command) {
	console.error(
		'usage: wasm-size-report.mjs <twiggy.csv> <names-kept.wasm> <shipped.wasm> <out.md> <command>',
	);
	process.exit(2);
}
const SRC = join(dirname(dirname(fileURLToPath(import.meta.url))), 'src');
const EXPORTS_ROW = 'wasm (exports, with what inlined into them)';

// twiggy's CSV: Name,ShallowSize,... with names quoted when they hold a comma or a quote.
function rows(text) {
	const out = [];
	for (const line of text.trim().split('\n').slice(1)) {
		const m = line.match(/^("(?:[^"]|"")*"|[^,]*),(\d+),/);
		if (!m) throw new Error(`unreadable twiggy line: ${line}`);
		let name = m[1];
		if (name.startsWith('"')) name = name.slice(1, -1).replace(/""/g, '"');
		// Crate disambiguators (dlmalloc[e24a27700634d609]) say nothing to a reader.
		out.push({ name: name.replace(/\[[0-9a-f]{16}\]/g, ''), bytes: Number(m[2]) });
	}
	return out;
}

// The function names wasm-bindgen exports (engine_new, item_poll, storeFailed, …).
const exported = new Set(
	WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(namedWasm)))
		.filter((e) => e.kind === 'function')
		.map((e) => e.name),
);

// The crate a path's code is defined in: `<A as B>::f` is A's impl unless A is a primitive or a
// type parameter (then B's); `<A>::f` is A's. A generic function is counted where it is defined:
// core::ptr::drop_in_place<resilient_engine::…> is core (`forEngine` counts those apart).
function ownerPath(name) {
	let s = name;
	while (s.startsWith('<')) {
		s = s.slice(1);
		s = s.replace(/^(?:&mut |&|\*const |\*mut |dyn |\[)+/, '');
		const head = s.match(/^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*/)?.[0] ?? '';
		if (!head.includes('::')) {
			// A primitive or a type parameter: the trait's crate (`T as alloc::…`).
			const as = s.indexOf(' as ');
			// An inherent method of a primitive (`<[u8]>::starts_with`): core's.
			if (as < 0) return `core::${s}`;
			s = s.slice(as + 4);
		}
	}
	return s;
}

// resilient_engine::item::machine::decide::… -> item::machine::decide, the deepest path that is a
// file under src/ (a folder's mod.rs counts as the folder).
function engineModule(path) {
	const segs = path.split('::').slice(1);
	const found = [];
	let dir = SRC;
	for (const seg of segs) {
		const id = seg.match(/^[a-z_][a-z0-9_]*$/)?.[0];
		if (!id) break;
		if (existsSync(join(dir, `${id}.rs`)) || existsSync(join(dir, id, 'mod.rs'))) {
			found.push(id);
			dir = join(dir, id);
		} else break;
	}
	if (found.length === 0) return { folder: 'lib.rs', module: 'lib.rs' };
	const folder = existsSync(join(SRC, found[0])) ? found[0] : `${found[0]}.rs`;
	return { folder, module: found.join('::') };
}

function classify(name) {
	if (/ subsection$/.test(name) || name === 'custom section "name"') return { kind: 'names' };
	if (name.startsWith('data segment ')) return { kind: 'data' };
	const bare = name.replace(/( externref shim| multivalue shim)+$/, '');
	if (exported.has(bare) && !bare.startsWith('__')) return { kind: 'exports' };
	if (!name.includes('::')) {
		if (/^(__wbindgen|__wbg_|__externref)/.test(bare))
			return { kind: 'crate', crate: 'wasm_bindgen' };
		if (
			/^(mem(cmp|cpy|set|move)|__multi3|__[a-z]+[0-9]+[a-z0-9]*|round|f?m(in|ax)f?)$/.test(bare)
		) {
			return { kind: 'crate', crate: 'compiler_builtins' };
		}
		if (/^code\[\d+\]$/.test(name)) return { kind: 'unnamed' };
		return { kind: 'structure' };
	}
	if (name.startsWith('import ')) return { kind: 'structure' };
	const path = ownerPath(name);
	const crate = path.split('::')[0].split('<')[0];
	if (crate === 'resilient_engine') return { kind: 'engine', ...engineModule(path) };
	if (crate === '__rustc') return { kind: 'crate', crate: 'compiler_builtins' };
	return { kind: 'crate', crate, forEngine: name.includes('resilient_engine::') };
}

const items = rows(readFileSync(csvPath, 'utf8'));
const namedTotal = statSync(namedWasm).size;
const shipped = statSync(shippedWasm).size;
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
const kinds = new Map(),
	folders = new Map(),
	modules = new Map(),
	crates = new Map(),
	forEngine = new Map();
const functionsPerModule = new Map();
for (const item of items) {
	const c = classify(item.name);
	add(kinds, c.kind, item.bytes);
	if (c.kind === 'engine') {
		add(folders, c.folder, item.bytes);
		add(modules, c.module, item.bytes);
		add(functionsPerModule, c.module, 1);
	} else if (c.kind === 'exports') {
		add(folders, EXPORTS_ROW, item.bytes);
		add(modules, EXPORTS_ROW, item.bytes);
		add(functionsPerModule, EXPORTS_ROW, 1);
	} else if (c.kind === 'crate') {
		add(crates, c.crate, item.bytes);
		if (c.forEngine) add(forEngine, c.crate, item.bytes);
	}
}
const names = kinds.get('names') ?? 0;
const code = namedTotal - names; // what the names-kept build would be without its name section
const kb = (n) => (n / 1024).toFixed(1);
const pct = (n) => `${((100 * n) / code).toFixed(1)} %`;
const sorted = (map) => [...map].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
const sum = (map) => [...map.values()].reduce((a, b) => a + b, 0);

const md = [];
md.push('# Engine size by module', '');
md.push(
	"Where the bytes of the engine's WASM (`pkg/engine_bg.wasm`) go, by the engine's own folders and",
	'modules (`src/<folder>/<module>.rs`) and by the crates it depends on. Issue 57: the build keeps the',
	'engine under a ceiling (`scripts/build-wasm.sh`), and this report is how to see what a change costs',
	'and where to cut. It is generated; do not edit it by hand. To print it again (and rewrite this file):',
	'',
	'```sh',
	command,
	'```',
	'',
	'The script builds the engine as `wasm-pack build --release` does (cargo release profile, then',
	'wasm-bindgen, then wasm-opt with the flags of `[package.metadata.wasm-pack.profile.release]` in',
	'`Cargo.toml`), but keeps the function names (`wasm-bindgen --keep-debug`, `wasm-opt -g`) so that',
	"[twiggy](https://crates.io/crates/twiggy) can attribute each function's own (shallow) bytes.",
	'',
	'- A function counts where its code is defined: `<resilient_engine::admit::tokens::Tokens as',
	'  …::Limit>::reserve` is `admit::tokens`, a closure counts with its function, and a generic of a',
	'  dependency instantiated for an engine type (`core::ptr::drop_in_place<resilient_engine::…>`,',
	'  `Vec<…>::push`) counts with that dependency. The last column of its table says how much of it',
	"  names an engine type; a lower bound, as Rust's symbol names carry type parameters only in",
	'  `drop_in_place<…>` and impl headers.',
	`- Functions named after wasm-bindgen's exports (\`engine_new\`, \`item_poll\`, …) are the`,
	'  boundary code plus whatever the optimizer inlined into them, often the whole of a small engine',
	`  function: they are one row, \`${EXPORTS_ROW}\`.`,
	'- Read-only data (strings, tables) cannot be told apart by module; it is one row, data segments.',
	'',
);
md.push('| | Bytes | KB |', '|---|---:|---:|');
md.push(`| Shipped \`pkg/engine_bg.wasm\` (as last built) | ${shipped} | ${kb(shipped)} |`);
md.push(`| This report's build, names kept | ${namedTotal} | ${kb(namedTotal)} |`);
md.push(`| of which the name section (not shipped) | ${names} | ${kb(names)} |`);
md.push(`| This report's build without its name section | ${code} | ${kb(code)} |`);
md.push('');
md.push(
	'The two builds without names differ by a few bytes when `pkg/` was built from other sources, or',
	'because wasm-opt optimizes slightly differently when it keeps names. Percentages below are of',
	'the build without its name section.',
	'',
);

md.push('## Summary', '');
md.push('| Part | Bytes | Share |', '|---|---:|---:|');
const summary = [
	['Engine code (`resilient_engine`, below by folder)', kinds.get('engine') ?? 0],
	[EXPORTS_ROW, kinds.get('exports') ?? 0],
	['Dependency crates (below)', kinds.get('crate') ?? 0],
	['Data segments (strings, tables)', kinds.get('data') ?? 0],
	["Unnamed functions (`code[N]`: wasm-bindgen's and wasm-opt's own)", kinds.get('unnamed') ?? 0],
	[
		'Module structure (types, imports, exports, tables, section headers)',
		kinds.get('structure') ?? 0,
	],
];
for (const [label, bytes] of summary) md.push(`| ${label} | ${bytes} | ${pct(bytes)} |`);
md.push(`| **Total** | **${code}** | 100 % |`, '');

md.push('## By engine folder', '');
md.push('| Folder | Bytes | Share |', '|---|---:|---:|');
for (const [folder, bytes] of sorted(folders)) {
	const label =
		folder === EXPORTS_ROW ? folder : `\`src/${folder.endsWith('.rs') ? folder : `${folder}/`}\``;
	md.push(`| ${label} | ${bytes} | ${pct(bytes)} |`);
}
md.push(`| **Engine total** | **${sum(folders)}** | ${pct(sum(folders))} |`, '');

md.push('## The 30 largest engine modules', '');
md.push('| Module | Functions | Bytes | Share |', '|---|---:|---:|---:|');
for (const [module, bytes] of sorted(modules).slice(0, 30)) {
	const label = module === EXPORTS_ROW ? module : `\`${module}\``;
	md.push(`| ${label} | ${functionsPerModule.get(module)} | ${bytes} | ${pct(bytes)} |`);
}
md.push('');

md.push('## By dependency crate', '');
md.push(
	'| Crate | Bytes | Share | Of which instantiated for engine types |',
	'|---|---:|---:|---:|',
);
for (const [crate, bytes] of sorted(crates)) {
	md.push(`| \`${crate}\` | ${bytes} | ${pct(bytes)} | ${forEngine.get(crate) ?? 0} |`);
}
md.push(
	`| **Dependencies total** | **${sum(crates)}** | ${pct(sum(crates))} | ${sum(forEngine)} |`,
	'',
);

const text = md.join('\n'); // ends with one newline: the last line pushed is ''
writeFileSync(outPath, text);
process.stdout.write(text);
