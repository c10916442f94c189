// A retry budget shared by the fleet (issue 31), in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1:
// 1.123.81 on Node 20), the package installed as n8n's community installer does. A loopback vendor
// answers 30 of every 100 calls with 503, spread out, below the breaker's trip rule. Call Chain,
// Redis store, Item Concurrency 8, up to 4 attempts. Counted at the vendor (every call past an
// item's first is a retry):
// - without the budget, about 0.4 retries per item;
// - with a budget of 10 % of calls plus 1 a second, from two `n8n execute` processes at once:
//   the retries stay within the budget over the run, the items it held back leave on `deferred`
//   with `retry_budget`, and every item leaves on some output.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { itemsInto, node } from '../support/guard-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const ITEMS = 600;
const REDIS = { redis: { id: 'budgetRedisCred1', name: 'budget redis' } };
let providers, n8n;

const calls = (tag) => providers.arrivals.filter((a) => a.id === `${tag}-${id}`).length;

function stormWorkflow(wid, tag, retryPolicy) {
	const base = `http://127.0.0.1:${providers.port}`;
	return itemsInto(
		wid,
		ITEMS,
		node(
			'Call Chain',
			n8n.nodeType,
			2,
			{
				providers: {
					provider: [{ name: `storm-${tag}-${id}`, url: `${base}/storm?pct=30&id=${tag}-${id}` }],
				},
				retryPolicy: { maxAttempts: 4, baseMs: 20, capMs: 100, ...retryPolicy },
				// Below the trip rule: a storm, not an outage (16 calls in flight can record five
				// failures in a row).
				breaker: { threshold: 50 },
				itemConcurrency: 8,
				stateStore: 'redis',
			},
			{ credentials: REDIS },
		),
	);
}

before(async () => {
	providers = await startProviders();
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	n8n.importCredentials([
		{
			...REDIS.redis,
			type: 'redis',
			data: { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' },
		},
	]);
	n8n.importWorkflow([
		stormWorkflow(`stormfree${id}`, 'free', { retryBudgetPercent: 0 }),
		stormWorkflow(`stormbudget${id}`, 'budget', {
			retryBudgetPercent: 10,
			retryBudgetFloorPerS: 1,
		}),
	]);
});

after(async () => {
	await providers?.close();
});

async function run(wid) {
	const started = Date.now();
	const { run: r, log } = await n8n.execute(wid);
	assert.ok(r, log.slice(-6000));
	const [done, deferred, failed] = outputs(r, 'Call Chain');
	return { done, deferred, failed, ms: Date.now() - started };
}

test(`n8n ${major}: under a 30 % storm the shared retry budget bounds the retries, and no item is lost`, async (t) => {
	const free = await run(`stormfree${id}`);
	const freeRetries = calls('free') - ITEMS;
	t.diagnostic(
		`without the budget: ${calls('free')} calls for ${ITEMS} items, ${freeRetries} retries (${(freeRetries / ITEMS).toFixed(2)} per item), done ${free.done.length}, deferred ${free.deferred.length}`,
	);
	assert.equal(free.done.length + free.deferred.length + free.failed.length, ITEMS);
	assert.ok(freeRetries > 0.3 * ITEMS, 'the storm is retried');

	const t0 = Date.now();
	const both = await Promise.all([run(`stormbudget${id}`), run(`stormbudget${id}`)]);
	const seconds = (Date.now() - t0) / 1000;
	const total = calls('budget');
	const retries = total - 2 * ITEMS;
	const byReason = {};
	for (const r of both) {
		assert.equal(r.done.length + r.deferred.length + r.failed.length, ITEMS, 'no item lost');
		for (const i of r.deferred) byReason[i.json.reason] = (byReason[i.json.reason] ?? 0) + 1;
	}
	const done = both.reduce((n, r) => n + r.done.length, 0);
	// Over the run: at most 10 % of the calls plus 1 retry a second (of the window); the calls
	// are counted eight at a time on a one-in-eight sample, so the count the 10 % is of is off by
	// up to three standard deviations of that sample (8 x sqrt(calls / 8) calls).
	const allowed = 0.1 * total + seconds + 10;
	const sampling = 3 * 0.1 * 8 * Math.sqrt(total / 8);
	t.diagnostic(
		`with the budget (10 % + 1/s), two processes: ${total} calls for ${2 * ITEMS} items, ${retries} retries (${(retries / (2 * ITEMS)).toFixed(2)} per item; allowed about ${allowed.toFixed(0)} over ${seconds.toFixed(1)} s), done ${done}, deferred ${JSON.stringify(byReason)}`,
	);
	assert.ok(
		retries <= allowed + sampling,
		`${retries} retries, ${allowed} allowed (+${sampling.toFixed(0)} for the sample)`,
	);
	assert.ok(retries < (freeRetries / ITEMS) * 2 * ITEMS, 'fewer retries than without the budget');
	assert.ok((byReason.retry_budget ?? 0) > 0, 'the items it held back are deferred');
	assert.ok(
		Object.keys(byReason).every((r) => r === 'retry_budget' || r === 'attempts_exhausted'),
		JSON.stringify(byReason),
	);
});
