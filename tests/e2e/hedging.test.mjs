// Hedged requests (issue 30) in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node
// 20), the package installed as n8n's community installer does. Call Chain over two loopback
// paths: A answers in 20 ms but 5 of every 100 calls take 2 s; B answers in 20 ms. Counted at
// the vendor:
// - without hedging, the items that met A's slow calls wait 2 s (the p99);
// - hedging after a fixed 400 ms or after A's p95: each slow call gets one hedge to B, whose
//   answer serves the item; the slow call's connection is closed (the vendor sees it go); each
//   item is served once; Get Metrics' hedges_total equals the hedges the engine sent, and the
//   vendor got each of them but those aborted before they left (the first call answered first:
//   on a loaded machine a fast call can outlast the delay);
// - with Max In Flight reached (one provider, one slot, held by the item's own call), no hedge.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { itemsInto, node } from '../support/guard-workflows.mjs';
import { metricValue } from '../support/metrics-text.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const ITEMS = 200;
let providers, n8n;

const arrivals = (tag) => providers.arrivals.filter((a) => a.id === `${tag}-${id}`);

function tailWorkflow(wid, tag, retryPolicy, { single = false, maxInFlight } = {}) {
	const base = `http://127.0.0.1:${providers.port}`;
	const a = { name: `a-${tag}-${id}`, url: `${base}/tail?slow=5&ms=2000&fast=20&id=${tag}a-${id}` };
	if (maxInFlight) a.options = { maxInFlight };
	const b = { name: `b-${tag}-${id}`, url: `${base}/tail?slow=0&fast=20&id=${tag}b-${id}` };
	const list = single ? [a] : [a, b];
	const wf = itemsInto(
		wid,
		ITEMS,
		node('Call Chain', n8n.nodeType, 2, {
			providers: { provider: list },
			retryPolicy: { maxAttempts: 1, ...retryPolicy },
			itemConcurrency: maxInFlight ?? 4,
		}),
	);
	wf.nodes.push(
		node(
			'Metrics',
			n8n.nodeType,
			2,
			{ operation: 'getMetrics', providers: { provider: list.map((p) => ({ name: p.name })) } },
			{ executeOnce: true, position: [1000, 0] },
		),
	);
	wf.connections['Call Chain'] = { main: [[{ node: 'Metrics', type: 'main', index: 0 }]] };
	return wf;
}

before(async () => {
	providers = await startProviders();
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	n8n.importWorkflow([
		tailWorkflow(`tailplain${id}`, 'plain', {}),
		tailWorkflow(`tailfixed${id}`, 'fixed', { hedge: 'fixed', hedgeDelayMs: 400 }),
		tailWorkflow(`tailp95${id}`, 'p95', { hedge: 'p95', hedgeMinMs: 50, hedgeMaxMs: 2000 }),
		tailWorkflow(
			`tailcap${id}`,
			'cap',
			{ hedge: 'fixed', hedgeDelayMs: 400 },
			{ single: true, maxInFlight: 1 },
		),
	]);
});

after(async () => {
	await providers?.close();
});

const quantile = (xs, q) => {
	const s = [...xs].sort((x, y) => x - y);
	return s[Math.min(s.length - 1, Math.ceil((q / 100) * s.length) - 1)];
};

async function run(tag) {
	const { run: r, log } = await n8n.execute(`tail${tag}${id}`, { timeoutMs: 240_000 });
	assert.ok(r, log.slice(-6000));
	const [done, deferred, failed] = outputs(r, 'Call Chain');
	assert.equal(
		done.length,
		ITEMS,
		`every item served (deferred ${deferred.length}, failed ${failed.length})`,
	);
	const ms = done.map((i) => i.json._resilience.totalMs);
	const attempts = done.flatMap((i) => i.json._resilience.attempts);
	const metrics = outputs(r, 'Metrics')[0][0].json.metrics;
	const a = arrivals(`${tag}a`);
	const b = arrivals(`${tag}b`);
	const stats = {
		p50: quantile(ms, 50),
		p95: quantile(ms, 95),
		p99: quantile(ms, 99),
		requests: a.length + b.length,
		hedges: attempts.filter((x) => x.hedge).length,
		hedgesAborted: attempts.filter((x) => x.hedge && x.outcome === 'abandoned').length,
		closed: [...a, ...b].filter((x) => x.closed).length,
		hedgesTotal: ['a', 'b'].reduce(
			(n, p) => n + (metricValue(metrics, 'hedges_total', `${p}-${tag}-${id}`) ?? 0),
			0,
		),
		winsTotal: ['a', 'b'].reduce(
			(n, p) => n + (metricValue(metrics, 'hedge_wins_total', `${p}-${tag}-${id}`) ?? 0),
			0,
		),
	};
	console.log(`n8n ${major} ${tag}: ${JSON.stringify(stats)}`);
	return { stats, done, a, b };
}

let plain;
test(`n8n ${major}: without hedging, the items that meet the slow share wait for it`, async () => {
	plain = await run('plain');
	assert.equal(plain.stats.requests, ITEMS, 'one request per item');
	assert.equal(plain.stats.hedges, 0);
	assert.ok(plain.stats.p99 >= 1_900, `p99 ${plain.stats.p99} ms: the slow share`);
});

for (const tag of ['fixed', 'p95']) {
	test(`n8n ${major}: hedging (${tag}) cuts the tail, each item served once, the losers closed, every hedge counted`, async () => {
		const { stats, a, b, done } = await run(tag);
		const late = a.filter((x) => x.late);
		assert.ok(late.length > 0, 'the slow share came');
		assert.ok(
			late.every((x) => x.closed),
			'every slow call lost to its hedge: the vendor saw its connection closed before it answered',
		);
		assert.ok(stats.hedges >= late.length, `${stats.hedges} hedges, ${late.length} slow calls`);
		for (const i of done)
			assert.equal(
				i.json._resilience.attempts.filter((x) => x.health === 'success').length,
				1,
				'each item served once',
			);
		assert.equal(stats.hedgesTotal, stats.hedges, "Get Metrics' hedges_total = the hedges sent");
		assert.ok(stats.winsTotal >= late.length && stats.winsTotal <= stats.hedges);
		// Every hedge reached B but those aborted early; nothing else did (no retries).
		assert.ok(
			b.length <= stats.hedges && b.length >= stats.hedges - stats.hedgesAborted,
			`B got ${b.length} of ${stats.hedges} hedges (${stats.hedgesAborted} aborted)`,
		);
		assert.equal(stats.requests, ITEMS + b.length);
		assert.ok(stats.closed <= stats.hedges, 'one call closed per hedge at most: the loser');
		assert.ok(stats.hedges <= 0.25 * ITEMS, `${stats.hedges} hedges for ${ITEMS} items`);
		if (plain)
			assert.ok(
				stats.p99 < plain.stats.p99 / 2,
				`p99 ${stats.p99} ms, without ${plain.stats.p99} ms`,
			);
	});
}

test(`n8n ${major}: with Max In Flight reached, no hedge is sent`, async () => {
	const { stats, a } = await run('cap');
	assert.equal(a.length, ITEMS, 'one request per item');
	assert.equal(stats.hedges, 0);
	assert.equal(stats.closed, 0);
});
