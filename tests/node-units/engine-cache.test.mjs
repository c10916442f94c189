// The package's one engine cache (dist/lib/engineCache.js), shared by Call Chain, Check/Report
// and the chat model: one engine per chain configuration, least recently used out first, and a
// workflow that computes a new chain per item does not grow the process's memory without bound
// (every evicted engine is collected).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import vm from 'node:vm';
const require = createRequire(import.meta.url);
const { engineFor, cachedEngines, ENGINE_CACHE_SIZE } = require('../../dist/lib/engineCache.js');
const { ROW_KINDS } = require('../../dist/lib/engineConstants.js');

const node = { name: 'Resilient Provider Call', type: 'resilientProviderCall', parameters: {} };
const invalid = (e) => e;
const chain = (n) => ({
	providers: [{ name: `p${n}` }, { name: 'backup' }],
	threshold: 1 + (Math.abs(n) % 50),
});

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
test('one engine per configuration; the least recently used leaves first', () => {
	const a = engineFor(node, chain(-1), invalid);
	assert.equal(engineFor(node, chain(-1), invalid), a, 'the same configuration, the same engine');
	for (let n = 0; n < ENGINE_CACHE_SIZE - 1; n++) {
		engineFor(node, chain(n), invalid);
		engineFor(node, chain(-1), invalid); // a stays the most recently used
	}
	engineFor(node, chain(10_000), invalid);
	assert.equal(engineFor(node, chain(-1), invalid), a, 'used last, so kept');
	assert.ok(cachedEngines() <= ENGINE_CACHE_SIZE);
	const b = engineFor(node, chain(20_000), invalid);
	for (let n = 0; n < ENGINE_CACHE_SIZE; n++) engineFor(node, chain(30_000 + n), invalid);
	assert.notEqual(engineFor(node, chain(20_000), invalid), b, 'evicted: built anew');
	// An evicted engine still held (an item running, a supplied chat model) keeps working.
	const item = b.item(Date.now(), 'held', '');
	assert.equal(item.poll(Date.now(), '\u001e'.repeat(2 * ROW_KINDS.length - 1)).step.kind, 'call');
	item.free();
});

test("a configuration the engine refuses is the caller's error, naming the field; none cached", () => {
	const before = cachedEngines();
	assert.throws(
		() => engineFor(node, { providers: [] }, (err) => new Error(`refused: ${err.field}`)),
		/refused: providers/,
	);
	assert.equal(cachedEngines(), before);
});

test('many distinct configurations do not grow memory without bound', async () => {
	// Rounds of 20,000 new chains each. Held without a bound, each round added 12-15 MB here
	// (their WASM chains, wrappers and keys); through the cache, rss
	// settles once the allocator's pages and V8's code are warm, and then stays flat.
	const round = 20_000;
	const rss = [];
	for (let r = 0; r < 6; r++) {
		for (let n = r * round; n < (r + 1) * round; n++) engineFor(node, chain(100_000 + n), invalid);
		gc();
		await new Promise((resolve) => setTimeout(resolve, 20));
		rss.push(process.memoryUsage().rss / 2 ** 20);
	}
	const lastThree = rss[5] - rss[2];
	console.log(
		`  rss after each ${round} distinct chains: ${rss.map((m) => m.toFixed(1)).join(', ')} MB (last three rounds +${lastThree.toFixed(1)} MB); ${cachedEngines()} cached, cap ${ENGINE_CACHE_SIZE}`,
	);
	assert.ok(cachedEngines() <= ENGINE_CACHE_SIZE);
	assert.ok(
		lastThree < 8,
		`rss grew ${lastThree.toFixed(1)} MB over the last 60,000 configurations`,
	);
});
