// n8n's package scanner (@n8n/scan-community-package, pinned in scripts/lib/scanner-install.sh)
// over this package's `npm pack` tarball, unpacked: its exported analyzePackage(dir) returns
// ESLint's "stylish" text, parsed here into findings { file, rule, message }.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;

/** The scanner's install directory (installed on first use, cached). */
export const scannerDir = () =>
	execFileSync('bash', [join(ROOT, 'scripts/lib/scanner-install.sh')], {
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
	}).trim();

/** Packs the package (its prepack builds dist/) and unpacks it; returns the package's folder. */
export function unpackedTarball() {
	const dir = mkdtempSync(join(tmpdir(), 'rpc-scan-'));
	execFileSync('npm', ['pack', '--pack-destination', dir, '--loglevel=error'], {
		cwd: ROOT,
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
	execFileSync('tar', ['xzf', tgz], { cwd: dir });
	return join(dir, 'package');
}

/** ESLint's stylish report -> findings; a line it cannot read throws (the format changed). */
export function parseStylish(text, packageDir) {
	const findings = [];
	let file;
	for (const raw of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
		if (!raw.trim() || /^✖ \d+ problems?/.test(raw.trim())) continue;
		if (/^\d+ errors? and \d+ warnings? potentially fixable/.test(raw.trim())) continue;
		if (!raw.startsWith(' ')) {
			file = relative(packageDir, raw.trim());
			continue;
		}
		const m = /^\s+\d+:\d+\s+(error|warning)\s+(.*?)\s{2,}(\S+)\s*$/.exec(raw);
		if (!m || !file) throw new Error(`scanner output line not understood: ${JSON.stringify(raw)}`);
		findings.push({ file, rule: m[3], message: m[2] });
	}
	return findings;
}

export async function scan(packageDir) {
	const mod = join(scannerDir(), 'node_modules/@n8n/scan-community-package/scanner/scanner.mjs');
	const { analyzePackage } = await import(mod);
	const result = await analyzePackage(packageDir);
	if (result.passed) return [];
	if (!result.details) throw new Error(`scanner failed: ${result.message}`);
	return parseStylish(result.details, packageDir);
}
