#!/usr/bin/env node
// A small analyser for V8 .cpuprofile files (node --cpu-prof): self time by function + file over a
// time window, the share of it in this package's code (dist/, and the WASM engine: its JS glue
// dist/engine/engine.js plus wasm:// frames) against n8n's and everything else's, and, for the
// samples whose stack passes through this package, which of its functions the time sits under.
//   node scripts/lib/cpuprofile.mjs <file.cpuprofile> [--from-us T] [--to-us T] [--top N] [--items N]
// --from-us/--to-us are on the profile's own clock (µs, CLOCK_MONOTONIC, like its startTime).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What a frame's url belongs to. */
export function category(url, functionName = '') {
	if (url.startsWith('wasm://')) return 'engine (wasm)';
	if (url.includes('/dist/engine/') || url.includes('/pkg/engine')) return 'engine (js glue)';
	if (url.includes(`${ROOT}/dist/`) || /\/n8n-nodes-resilient-provider-call\/dist\//.test(url))
		return 'this package (dist/)';
	if (/node_modules\/(n8n|n8n-core|n8n-workflow|n8n-nodes-base|@n8n)\//.test(url)) return 'n8n';
	if (url.includes('node_modules/')) return 'npm dependencies';
	if (url.startsWith('node:')) return 'Node.js internals';
	if (url) return 'other JS';
	if (functionName === '(idle)') return 'idle';
	if (functionName === '(garbage collector)') return 'GC';
	if (functionName === '(program)') return 'V8 (program)';
	return 'V8 builtins / native';
}

/** Short, readable location: `pkg/relative/file.js:line`. */
export function where(url, line) {
	if (!url) return '(native)';
	let u = url.replace(/^file:\/\//, '');
	const nm = u.lastIndexOf('node_modules/');
	if (nm >= 0) u = u.slice(nm + 'node_modules/'.length);
	else if (u.startsWith(`${ROOT}/`)) u = u.slice(ROOT.length + 1);
	return `${u}:${line + 1}`;
}

export function loadProfile(file) {
	const p = JSON.parse(readFileSync(file, 'utf8'));
	const byId = new Map(p.nodes.map((n) => [n.id, n]));
	const parent = new Map();
	for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
	// Sample k is taken at startTime + sum(timeDeltas[0..k]); it stands for the time until the next.
	const times = new Array(p.samples.length);
	let t = p.startTime;
	for (let k = 0; k < p.samples.length; k++) times[k] = t += p.timeDeltas[k];
	return { p, byId, parent, times };
}

/**
 * Aggregates samples in [fromUs, toUs]. Returns totals per category, the top self-time frames,
 * and, for samples whose stack holds a frame of this package, the time under each of its
 * deepest package frames (where our code handed over to n8n, Node or the engine).
 */
export function summarise(prof, { fromUs = -Infinity, toUs = Infinity } = {}) {
	const { p, byId, parent, times } = prof;
	const self = new Map();
	const cats = new Map();
	const under = new Map();
	const underCat = new Map();
	const calls = new Map();
	let total = 0;
	let idle = 0;
	let inPackage = 0;
	const ours = (n) => {
		const c = category(n.callFrame.url);
		return c === 'this package (dist/)' || c.startsWith('engine');
	};
	for (let k = 0; k < p.samples.length; k++) {
		if (times[k] < fromUs || times[k] > toUs) continue;
		const dt = (k + 1 < times.length ? times[k + 1] : p.endTime) - times[k];
		if (dt <= 0) continue;
		const leaf = byId.get(p.samples[k]);
		const cf = leaf.callFrame;
		total += dt;
		if (cf.functionName === '(idle)') idle += dt;
		const cat = category(cf.url, cf.functionName);
		cats.set(cat, (cats.get(cat) ?? 0) + dt);
		const key = `${cf.functionName || '(anonymous)'}\t${where(cf.url, cf.lineNumber)}\t${cat}`;
		self.set(key, (self.get(key) ?? 0) + dt);
		// The deepest frame of this package's TypeScript (dist/, not the engine) on the stack: the
		// function of ours the time sits under, with what the leaf belongs to (engine, n8n, Node...).
		let mine = null;
		let callee = null;
		let any = false;
		for (let id = leaf.id, child = null; id !== undefined; child = id, id = parent.get(id)) {
			const n = byId.get(id);
			if (!ours(n)) continue;
			any = true;
			if (category(n.callFrame.url) === 'this package (dist/)') {
				mine = n.callFrame;
				callee = child === null ? null : byId.get(child).callFrame;
				break;
			}
		}
		if (mine) {
			const c = callee
				? `${callee.functionName || '(anonymous)'} ${where(callee.url, callee.lineNumber)}`
				: '(its own code)';
			const k3 = `${mine.functionName || '(anonymous)'}\t${where(mine.url, mine.lineNumber)}\t${c}`;
			calls.set(k3, (calls.get(k3) ?? 0) + dt);
		}
		if (any) {
			const f = mine ?? { functionName: '(engine, no caller of ours)', url: '', lineNumber: 0 };
			const k2 = `${f.functionName || '(anonymous)'}\t${where(f.url, f.lineNumber)}\t${cat}`;
			under.set(k2, (under.get(k2) ?? 0) + dt);
			underCat.set(cat, (underCat.get(cat) ?? 0) + dt);
			inPackage += dt;
		}
	}
	const sorted = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]);
	return {
		totalUs: total,
		idleUs: idle,
		inPackageUs: inPackage,
		categories: sorted(cats),
		self: sorted(self),
		under: sorted(under),
		underCategories: sorted(underCat),
		calls: sorted(calls),
	};
}

/** A printable report of `summarise`'s result; `items` turns times into µs per item. */
export function report(s, { top = 20, items = 0, title = '' } = {}) {
	const busy = s.totalUs - s.idleUs;
	const pct = (us, of = busy) => `${((100 * us) / (of || 1)).toFixed(1).padStart(5)} %`;
	const per = (us) => (items ? `${(us / items).toFixed(1).padStart(7)} µs/item` : '');
	const out = [];
	if (title) out.push(title);
	out.push(
		`  window ${(s.totalUs / 1000).toFixed(0)} ms, busy (not idle) ${(busy / 1000).toFixed(0)} ms; shares below are of busy time`,
	);
	out.push('  self time by what the code belongs to:');
	for (const [c, us] of s.categories)
		if (c !== 'idle') out.push(`    ${c.padEnd(26)} ${pct(us)} ${per(us)}`);
	out.push(
		`  stack passes through this package (dist/ or engine): ${pct(s.inPackageUs)} ${per(s.inPackageUs)}; of that, self time in:`,
	);
	for (const [c, us] of s.underCategories) out.push(`    ${c.padEnd(26)} ${pct(us)} ${per(us)}`);
	out.push(`  top ${top} functions by self time (function, location, belongs to):`);
	for (const [k, us] of s.self.filter(([k]) => !k.startsWith('(idle)')).slice(0, top)) {
		const [fn, loc, cat] = k.split('\t');
		out.push(
			`    ${pct(us)} ${per(us)}  ${fn.slice(0, 40).padEnd(40)} ${loc.slice(-60)}  [${cat}]`,
		);
	}
	out.push(
		`  time under this package's functions (deepest one on the stack) -> where the time is spent, top ${top}:`,
	);
	for (const [k, us] of s.under.slice(0, top)) {
		const [fn, loc, cat] = k.split('\t');
		out.push(
			`    ${pct(us)} ${per(us)}  ${fn.slice(0, 30).padEnd(30)} ${loc.slice(-45).padEnd(45)} -> ${cat}`,
		);
	}
	out.push(`  calls this package makes (our function -> the callee, inclusive), top ${top}:`);
	for (const [k, us] of s.calls.slice(0, top)) {
		const [fn, loc, callee] = k.split('\t');
		out.push(
			`    ${pct(us)} ${per(us)}  ${`${fn} (${loc.split('/').pop()})`.slice(0, 44).padEnd(44)} -> ${callee.slice(0, 70)}`,
		);
	}
	return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const args = process.argv.slice(2);
	const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
	const file = args.find((a, i) => !a.startsWith('--') && !String(args[i - 1]).startsWith('--'));
	if (!file || args.includes('--help') || args.includes('-h')) {
		console.log(
			readFileSync(fileURLToPath(import.meta.url), 'utf8')
				.split('\n')
				.slice(1, 7)
				.map((l) => l.replace(/^\/\/ ?/, ''))
				.join('\n'),
		);
		process.exit(file ? 0 : 1);
	}
	const prof = loadProfile(file);
	const s = summarise(prof, {
		fromUs: Number(opt('--from-us', -Infinity)),
		toUs: Number(opt('--to-us', Infinity)),
	});
	console.log(
		report(s, { top: Number(opt('--top', 20)), items: Number(opt('--items', 0)), title: file }),
	);
}
