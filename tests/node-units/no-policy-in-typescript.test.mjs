// The architecture's promise, held by a test: TypeScript moves bytes, the engine decides. A
// status comparison, an error-code regex, delay arithmetic, a version's default, a finish-word
// table or a price in n8n-node/ (outside the files the engine generates) is a decision made in
// TypeScript, and a metric counted there a count of its own. Each pattern is checked first against the
// kind of line it exists to catch (the lines this package once had), so a pattern that catches
// nothing fails here rather than passing silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeSources } from './node-sources.mjs';

const PATTERNS = [
	{
		what: 'a status comparison',
		re: /\bstatus(Code)?\s*(===?|!==?|[<>]=?)\s*\d|[<>]=?\s*[1-5]\d\d\b|\b[1-5]\d\d\s*[<>]=?\s*\w/,
		catches: ['if (status >= 500) retry()', 'res.statusCode === 429', 'n >= 100 && n <= 599'],
		spares: ['if (outcome.kind === "status")', 'const lanes = Math.min(concurrency, items.length)'],
	},
	{
		what: 'a status or error-code regex',
		re: /\/\^E\[|\/\^\[A-Z(?!a)|\\d\{3\}/,
		catches: ['/^E[A-Z]+$/.test(e.code)', '/^[A-Z_]+$/.test(code)', '/^\\d{3}$/.test(v)'],
		spares: ['/^[A-Za-z0-9_:.-]{0,64}$/.test(s.prefix)'],
	},
	{
		what: 'delay arithmetic',
		re: /Math\.random\(\)\s*\*|\*\s*2\s*\*\*|\b2\s*\*\*\s*[\w(]|Math\.(min|max)\([^)]*\b\w*(Ms|_ms)\b/,
		catches: [
			'const wait = Math.random() * cap',
			'base * 2 ** attempt',
			'Math.min(capMs, base * 2)',
			'Math.min(retry_after_ms, budget)',
		],
		spares: [
			'Math.random().toString(36).slice(2, 10)',
			'Math.min(concurrency, items.length)',
			'Math.max(1, Math.ceil(ttl))',
		],
	},
	{
		what: 'a counter of its own',
		re: /\b(calls|failures|rejections|transitions|retries|rate_limited_429|give_ups|deferrals)\b[^;]*(\+\+|\+=|\+\s*1\b)/,
		catches: [
			'p.transitions = (p.transitions ?? 0) + 1;',
			'counts.failures++',
			'c.rejections += skipped.length',
		],
		spares: ['for (const [k, v] of Object.entries(c)) if (v) p[k] = (p[k] ?? 0) + v;'],
	},
	{
		what: "a version default (the engine's table, src/config/versions.rs, says what a version does)",
		re: /typeVersion\s*[<>]=?\s*\d|(?<![.\w])version\s*[<>]=?\s*\d+\.\d/,
		catches: [
			'fleetLimitDefault(config, ctx.getNode().typeVersion >= 1.1);',
			'if (version >= 2.1) config.wait_in_line = true;',
		],
		spares: ['const list = version >= 2 ? readRowsV2(ctx, i, rows, fail) : rows;'],
	},
	{
		what: 'a finish-word table (the engine reads finish words: src/verdict/finish_word.rs)',
		re: /\b(end_turn|max_tokens|MAX_TOKENS|tool_use|SAFETY|PROHIBITED_CONTENT)\s*:\s*['"]/,
		catches: ["end_turn: 'stop',", "MAX_TOKENS: 'length',"],
		spares: ['max_tokens: maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,'],
	},
	{
		what: "a price (what tokens cost is the engine's: src/limits/token_limit.rs)",
		re: /\b(cache_write|cached_input|cacheWrite|cachedInput)\w*\s*\*|\*\s*1\.25\b|\binput\s*\*\s*price/i,
		catches: ['const cost = cache_write * 1.25', 'input * price_input'],
		spares: ["price_cache_write: money('priceCacheWrite'),"],
	},
];

test('each pattern catches the decisions it names and spares the lines it does not', () => {
	for (const { what, re, catches, spares } of PATTERNS) {
		for (const line of catches) assert.match(line, re, `${what} must catch: ${line}`);
		for (const line of spares) assert.doesNotMatch(line, re, `${what} must spare: ${line}`);
	}
});

test('n8n-node/ holds no status comparison, error-code regex, delay arithmetic, version default, finish-word table or price', () => {
	const { files, lines } = nodeSources();
	const found = [];
	for (const { at, line } of lines)
		for (const { what, re } of PATTERNS)
			if (re.test(line)) found.push(`${at}: ${what}: ${line.trim()}`);
	assert.ok(files.length > 40, `only ${files.length} TypeScript files found under n8n-node/`);
	assert.deepEqual(found, [], 'decisions belong in the engine (src/):\n' + found.join('\n'));
});
