// Every relative link in README.md, CHANGELOG.md and docs/*.md resolves: the file exists, and a
// `#anchor` names a heading of the target (GitHub's slug rules). Every file README links to ships
// in the package (`npm pack --dry-run`), so the links work on the npm page's unpacked copy too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PAGES = [
	'README.md',
	'CHANGELOG.md',
	...readdirSync(join(ROOT, 'docs'))
		.filter((f) => f.endsWith('.md'))
		.map((f) => `docs/${f}`),
];

/** Markdown without its fenced and inline code, where `[x](y)` is not a link. */
const prose = (md) => md.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats -1, -2. */
export function anchors(md) {
	const seen = new Map();
	const out = new Set();
	for (const line of prose(md).split('\n')) {
		const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (!m) continue;
		const text = m[1]
			.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
			.replace(/[*_]/g, (c) => (c === '_' ? '_' : ''));
		const base = text
			.toLowerCase()
			.replace(/[^\p{L}\p{N}\s_-]/gu, '')
			.replace(/\s/g, '-');
		const n = seen.get(base) ?? 0;
		seen.set(base, n + 1);
		out.add(n ? `${base}-${n}` : base);
	}
	return out;
}

/** The relative links of a page: [text](target) and ![alt](target), without web addresses. */
function links(md) {
	const out = [];
	for (const m of prose(md).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
		const target = m[1];
		if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
		out.push(target);
	}
	return out;
}

const read = (rel) => readFileSync(join(ROOT, rel), 'utf8');

test('the anchor rule matches GitHub on headings these pages use', () => {
	const a = anchors(
		'# Call Chain: the node\n## Parameters (defaults in brackets)\n## Tests\n## Tests\n',
	);
	assert.deepEqual(
		[...a],
		['call-chain-the-node', 'parameters-defaults-in-brackets', 'tests', 'tests-1'],
	);
});

for (const page of PAGES) {
	test(`every relative link in ${page} resolves`, () => {
		const md = read(page);
		const bad = [];
		for (const target of links(md)) {
			const [path, anchor] = target.split('#');
			const file = path ? join(ROOT, dirname(page), decodeURI(path)) : join(ROOT, page);
			if (!existsSync(file)) {
				bad.push(`${target}: no file ${relative(ROOT, file)}`);
				continue;
			}
			if (anchor !== undefined && statSync(file).isFile() && file.endsWith('.md')) {
				if (!anchors(readFileSync(file, 'utf8')).has(anchor))
					bad.push(`${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
			}
		}
		assert.deepEqual(bad, [], `${page} has broken links`);
	});
}

test("every file README links to ships in the package (npm pack's file list)", () => {
	const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
		cwd: ROOT,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'ignore'],
	});
	const shipped = new Set(JSON.parse(out)[0].files.map((f) => f.path));
	const missing = [];
	const visit = (page, seen) => {
		if (seen.has(page)) return;
		seen.add(page);
		for (const target of links(read(page))) {
			const path = target.split('#')[0];
			if (!path) continue;
			const rel = relative(ROOT, join(ROOT, dirname(page), decodeURI(path)));
			if (!shipped.has(rel)) missing.push(`${page} -> ${rel}`);
			else if (rel.endsWith('.md')) visit(rel, seen);
		}
	};
	visit('README.md', new Set());
	assert.deepEqual(missing, [], 'linked from README (or a page it links) but not in the package');
});
