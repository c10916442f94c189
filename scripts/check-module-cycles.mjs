#!/usr/bin/env node
// Fails if the modules of a Rust crate import each other in a cycle. A cycle means no module of
// it can be read, tested or moved alone; the compiler accepts cycles, so this check is the gate.
//
// For each crate (the root package and every workspace member of ./Cargo.toml, or the crate
// folders given as arguments) and each crate root in it (src/lib.rs, src/main.rs, src/bin/*.rs,
// src/bin/*/main.rs), it follows the `mod x;` declarations, reads every module's references to
// other modules (`use crate::{a, b::c}`, `crate::a::B` in code, `super::`, `self::`, paths that
// start with a child module's name) and looks for a cycle among them. Inline modules
// (`#[cfg(test)] mod tests { use super::*; }`) count as part of their file's module, so a test
// module's reference to its parent is no edge. Re-exports (`pub use error::EngineError;` in
// lib.rs) are followed to the module that defines the name. Comments and string literals are
// skipped. No dependencies: Node 20.
//
// Usage: node scripts/check-module-cycles.mjs [--edges] [crate-dir ...]   (--edges: print the graph)
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

// ---- tokens -------------------------------------------------------------------------------------

/** Identifiers, `::` and single punctuation characters with their line; comments, strings, chars
 *  and numbers are dropped (they cannot name a module). */
export function tokenize(src) {
	const out = [];
	let i = 0;
	let line = 1;
	const n = src.length;
	const isIdStart = (c) => /[A-Za-z_]/.test(c);
	const isId = (c) => /[A-Za-z0-9_]/.test(c);
	const skipTo = (end) => {
		for (; i < end; i++) if (src[i] === '\n') line++;
	};
	while (i < n) {
		const c = src[i];
		if (c === '\n') {
			line++;
			i++;
		} else if (c === ' ' || c === '\t' || c === '\r') {
			i++;
		} else if (c === '/' && src[i + 1] === '/') {
			while (i < n && src[i] !== '\n') i++;
		} else if (c === '/' && src[i + 1] === '*') {
			// Block comments nest in Rust.
			let depth = 0;
			let j = i;
			do {
				if (src[j] === '/' && src[j + 1] === '*') (depth++, (j += 2));
				else if (src[j] === '*' && src[j + 1] === '/') (depth--, (j += 2));
				else j++;
			} while (depth > 0 && j < n);
			skipTo(j);
		} else if (/^(b|c)?r#*"/.test(src.slice(i, i + 300)) && !isId(src[i - 1] ?? ' ')) {
			// Raw string r"..", r#".."#, br##".."##: ends at a quote followed by as many #.
			const m = /^(b|c)?r(#*)"/.exec(src.slice(i, i + 300));
			const close = '"' + m[2];
			const end = src.indexOf(close, i + m[0].length);
			skipTo(end < 0 ? n : end + close.length);
		} else if (
			c === '"' ||
			((c === 'b' || c === 'c') && src[i + 1] === '"' && !isId(src[i - 1] ?? ' '))
		) {
			let j = src.indexOf('"', i) + 1;
			while (j < n && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
			skipTo(j + 1);
		} else if (c === "'") {
			// A char literal ('a', '\n', '\u{1F600}', b'x') or a lifetime ('a, 'static).
			const m = /^'(\\(u\{[0-9A-Fa-f_]*\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'/u.exec(
				src.slice(i, i + 16),
			);
			if (m) skipTo(i + m[0].length);
			else {
				i++;
				while (i < n && isId(src[i])) i++;
			}
		} else if (/[0-9]/.test(c)) {
			while (i < n && /[0-9A-Za-z_.]/.test(src[i]) && !(src[i] === '.' && src[i + 1] === '.')) i++;
		} else if (isIdStart(c)) {
			let j = i;
			if (src.startsWith('r#', i) && isIdStart(src[i + 2] ?? '')) j += 2; // raw identifier r#type
			const start = j;
			while (j < n && isId(src[j])) j++;
			out.push({ t: src.slice(start, j), line });
			i = j;
		} else if (c === ':' && src[i + 1] === ':') {
			out.push({ t: '::', line });
			i += 2;
		} else {
			out.push({ t: c, line });
			i++;
		}
	}
	return out;
}

const isIdent = (t) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(t);

// ---- one file -----------------------------------------------------------------------------------

/**
 * What a file says about modules: the file modules it declares (`mod x;`), the paths it uses
 * (each with the inline-module path it appears in, so `super` resolves right), and its re-exports.
 */
function scanFile(tokens) {
	const decls = []; // names of `mod x;`
	const refs = []; // { inline: [names], path: [segments], line, isUse }
	const reexports = []; // { inline, path, alias } from `pub use`
	const inline = []; // stack of { name, depth }
	let depth = 0;
	for (let k = 0; k < tokens.length; k++) {
		const t = tokens[k].t;
		if (t === '{') depth++;
		else if (t === '}') {
			depth--;
			while (inline.length && inline.at(-1).depth > depth) inline.pop();
		} else if (t === 'mod' && isIdent(tokens[k + 1]?.t ?? '') && tokens[k - 1]?.t !== '::') {
			const name = tokens[k + 1].t;
			if (tokens[k + 2]?.t === ';') decls.push(name);
			else if (tokens[k + 2]?.t === '{') {
				inline.push({ name, depth: depth + 1 });
				depth++;
				k += 2;
			}
		} else if (t === 'use' && tokens[k - 1]?.t !== '::') {
			const isPub =
				tokens[k - 1]?.t === 'pub' || (tokens[k - 1]?.t === ')' && precededByPub(tokens, k - 1));
			const { paths, end } = useTree(tokens, k + 1);
			const names = inline.map((m) => m.name);
			for (const p of paths) {
				refs.push({ inline: names, path: p.path, line: tokens[k].line, isUse: true });
				if (isPub) reexports.push({ inline: names, path: p.path, alias: p.alias });
			}
			k = end;
		} else if (isIdent(t) && tokens[k + 1]?.t === '::' && tokens[k - 1]?.t !== '::') {
			// A path in code: a::b::C (stops at a turbofish or anything not an identifier).
			const path = [t];
			let j = k + 1;
			while (tokens[j]?.t === '::' && isIdent(tokens[j + 1]?.t ?? '')) {
				path.push(tokens[j + 1].t);
				j += 2;
			}
			refs.push({ inline: inline.map((m) => m.name), path, line: tokens[k].line, isUse: false });
			k = j - 1;
		}
	}
	return { decls, refs, reexports };
}

/** `pub(crate) use`: the `)` at index k closes a visibility that starts with `pub`. */
function precededByPub(tokens, k) {
	let j = k;
	while (j > 0 && tokens[j].t !== '(') j--;
	return tokens[j - 1]?.t === 'pub';
}

/** The paths of a use tree starting at token k (`a::{b, c::d as e, self, *}`), up to its `;`. */
function useTree(tokens, k) {
	const paths = [];
	const walk = (prefix, j) => {
		const path = [...prefix];
		if (tokens[j]?.t === '::') j++; // leading `::` (extern crate path)
		for (;;) {
			const t = tokens[j]?.t;
			if (t === '{') {
				j++;
				while (tokens[j] && tokens[j].t !== '}') {
					j = walk(path, j);
					if (tokens[j]?.t === ',') j++;
				}
				return j + 1;
			}
			if (t === '*') {
				paths.push({ path, alias: '*' });
				return j + 1;
			}
			if (!isIdent(t ?? '')) return j;
			if (t === 'self' && prefix.length > 0 && path.length === prefix.length) {
				// `a::{self}` names the module a itself.
				j++;
				let alias = path.at(-1);
				if (tokens[j]?.t === 'as') ((alias = tokens[j + 1].t), (j += 2));
				paths.push({ path, alias });
				return j;
			}
			path.push(t);
			j++;
			if (tokens[j]?.t === '::') {
				j++;
				continue;
			}
			let alias = t;
			if (tokens[j]?.t === 'as') ((alias = tokens[j + 1].t), (j += 2));
			paths.push({ path, alias });
			return j;
		}
	};
	let j = walk([], k);
	while (tokens[j] && tokens[j].t !== ';') j++;
	return { paths, end: j };
}

// ---- one crate root -----------------------------------------------------------------------------

/** Files of a module tree from its root file: module path (['a', 'b']) -> file. */
function moduleTree(rootFile) {
	const modules = new Map(); // key 'a::b' ('' = root) -> { file, scan, children:Set }
	const visit = (segs, file, dirForChildren) => {
		const scan = scanFile(tokenize(fs.readFileSync(file, 'utf8')));
		const key = segs.join('::');
		const mod = { key, segs, file, scan, children: new Set() };
		modules.set(key, mod);
		for (const name of scan.decls) {
			const candidates = [
				path.join(dirForChildren, `${name}.rs`),
				path.join(dirForChildren, name, 'mod.rs'),
			];
			const file = candidates.find((f) => fs.existsSync(f));
			if (!file) continue; // e.g. a module behind #[path] or generated: nothing to read
			mod.children.add(name);
			const childDir = file.endsWith('mod.rs')
				? path.dirname(file)
				: path.join(dirForChildren, name);
			visit([...segs, name], file, childDir);
		}
	};
	visit([], rootFile, path.dirname(rootFile));
	return modules;
}

/** The edges between modules of one tree: 'a' -> 'b' with the line that makes it. */
function moduleEdges(modules) {
	// Names each module re-exports (`pub use x::Name`): name -> absolute path segments.
	const exported = new Map();
	const absolute = (mod, inline, p) => {
		const here = [...mod.segs, ...inline];
		let segs;
		if (p[0] === 'crate') segs = p.slice(1);
		else if (p[0] === 'self') segs = [...here, ...p.slice(1)];
		else if (p[0] === 'super') {
			segs = [...here];
			let i = 0;
			while (p[i] === 'super') (segs.pop(), i++);
			segs.push(...p.slice(i));
		} else if (inline.length === 0 && mod.children.has(p[0])) segs = [...mod.segs, ...p];
		else return null; // an extern crate, std, a local name or a type: not a module of this crate
		return segs;
	};
	for (const mod of modules.values()) {
		const names = new Map();
		for (const r of mod.scan.reexports) {
			const segs = absolute(mod, r.inline, r.path);
			if (segs && r.alias !== '*') names.set(r.alias, segs);
		}
		exported.set(mod.key, names);
	}
	// The module a path lands in: its longest module prefix, through re-exports of that module.
	const resolve = (segs, seen = 0) => {
		let len = segs.length;
		while (len > 0 && !modules.has(segs.slice(0, len).join('::'))) len--;
		const key = segs.slice(0, len).join('::');
		const via = exported.get(key)?.get(segs[len]);
		if (via && seen < 8) return resolve([...via, ...segs.slice(len + 1)], seen + 1);
		return key;
	};
	const edges = new Map(); // from -> Map(to -> 'file:line')
	for (const mod of modules.values()) {
		const out = new Map();
		for (const r of mod.scan.refs) {
			const segs = absolute(mod, r.inline, r.path);
			if (!segs) continue;
			const to = resolve(segs);
			if (to === mod.key || out.has(to)) continue;
			out.set(to, `${path.relative(process.cwd(), mod.file)}:${r.line}`);
		}
		edges.set(mod.key, out);
	}
	return edges;
}

/** One cycle per strongly connected component of more than one module (Tarjan). */
function cycles(nodes, edges) {
	let index = 0;
	const idx = new Map();
	const low = new Map();
	const stack = [];
	const on = new Set();
	const sccs = [];
	const strong = (v) => {
		idx.set(v, index);
		low.set(v, index++);
		stack.push(v);
		on.add(v);
		for (const w of edges.get(v)?.keys() ?? []) {
			if (!idx.has(w)) (strong(w), low.set(v, Math.min(low.get(v), low.get(w))));
			else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
		}
		if (low.get(v) === idx.get(v)) {
			const scc = [];
			let w;
			do ((w = stack.pop()), on.delete(w), scc.push(w));
			while (w !== v);
			if (scc.length > 1) sccs.push(scc);
		}
	};
	for (const v of nodes) if (!idx.has(v)) strong(v);
	// A concrete cycle inside each component: breadth-first from its first module back to itself.
	return sccs.map((scc) => {
		const inside = new Set(scc);
		const start = [...scc].sort()[0];
		const prev = new Map([[start, null]]);
		const queue = [start];
		while (queue.length) {
			const v = queue.shift();
			for (const w of edges.get(v).keys()) {
				if (!inside.has(w)) continue;
				if (w === start) {
					const cycle = [v];
					for (let u = prev.get(v); u !== null; u = prev.get(u)) cycle.unshift(u);
					return { modules: scc, cycle: [...cycle, start] };
				}
				if (!prev.has(w)) (prev.set(w, v), queue.push(w));
			}
		}
		return { modules: scc, cycle: scc };
	});
}

// ---- crates -------------------------------------------------------------------------------------

function crateDirs() {
	const args = process.argv.slice(2).filter((a) => a !== '--edges');
	if (args.length) return args.map((a) => path.resolve(a));
	const toml = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
	const members = /^\s*members\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? '';
	const dirs = [ROOT, ...[...members.matchAll(/"([^"]+)"/g)].map((m) => path.join(ROOT, m[1]))];
	return [...new Set(dirs)];
}

function crateRoots(dir) {
	const src = path.join(dir, 'src');
	const roots = ['lib.rs', 'main.rs'].map((f) => path.join(src, f)).filter((f) => fs.existsSync(f));
	const bin = path.join(src, 'bin');
	if (fs.existsSync(bin)) {
		for (const e of fs
			.readdirSync(bin, { withFileTypes: true })
			.sort((a, b) => a.name.localeCompare(b.name))) {
			if (e.isFile() && e.name.endsWith('.rs')) roots.push(path.join(bin, e.name));
			else if (e.isDirectory() && fs.existsSync(path.join(bin, e.name, 'main.rs')))
				roots.push(path.join(bin, e.name, 'main.rs'));
		}
	}
	return roots;
}

const name = (key) => key || 'crate';
const printEdges = process.argv.includes('--edges');
let failed = false;
const summary = [];
for (const dir of crateDirs()) {
	const roots = crateRoots(dir);
	if (!roots.length) {
		console.error(
			`check-module-cycles: no crate root under ${path.relative(ROOT, dir) || '.'}/src`,
		);
		failed = true;
		continue;
	}
	for (const root of roots) {
		const modules = moduleTree(root);
		const edges = moduleEdges(modules);
		const count = [...edges.values()].reduce((s, m) => s + m.size, 0);
		const label = path.relative(process.cwd(), root);
		if (printEdges)
			for (const [from, out] of edges)
				console.log(
					`${label}: ${name(from)} -> ${[...out.keys()].map(name).join(', ') || '(nothing)'}`,
				);
		for (const { modules: scc, cycle } of cycles([...modules.keys()], edges)) {
			failed = true;
			console.error(`module cycle in ${label}: ${cycle.map(name).join(' -> ')}`);
			for (let i = 0; i + 1 < cycle.length; i++)
				console.error(
					`  ${name(cycle[i])} -> ${name(cycle[i + 1])}  (${edges.get(cycle[i]).get(cycle[i + 1])})`,
				);
			if (scc.length > cycle.length - 1)
				console.error(`  (all modules of this cycle: ${scc.map(name).sort().join(', ')})`);
		}
		summary.push(`${label} ${modules.size} modules ${count} edges`);
	}
}
if (failed) process.exit(1);
console.log(`module cycles: none (${summary.join('; ')})`);
