// Never lose an item, property-style, in ONE real n8n execution (N8N_MAJOR=2: 2.41.1 on Node 24;
// 1: 1.123.81 on Node 20): seeded random chains of 1-4 providers over scripted behaviours
// (200, always 500, 503 then 200, 429 Retry-After, a 3600 s hint, 400/404/422, a byte-a-second
// drip and a silent socket cut by short deadlines, a reset mid-body, a body failing its check),
// random item counts, item concurrency, thresholds, attempts, budgets and exhaustion modes; each
// chain is a branch of one workflow. For every branch: items in == success + deferred + failed,
// every input index comes out exactly once (pairedItem), the item JSON travels with a
// deferred/failed item, no item overstays its budget. Reproduce with NEVER_LOSE_SEED=<seed>.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const SEED = Number(process.env.NEVER_LOSE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CHAINS = Number(process.env.NEVER_LOSE_CHAINS ?? 40);
let providers, base, run, log;

function mulberry32(a) {
	return () => {
		a |= 0;
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
const rnd = mulberry32(SEED);
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = (xs) => xs[int(0, xs.length - 1)];

// Behaviours; the slow ones carry a short per-attempt deadline and one attempt.
const ROUTES = [
	() => ({ route: '/ok' }),
	() => ({ route: '/ok', q: `delay=${int(10, 150)}` }),
	() => ({ route: '/always500' }),
	() => ({ route: '/fail-then-ok', q: `n=${int(1, 4)}` }),
	() => ({ route: '/flaky-ra', q: 'n=1' }),
	() => ({ route: '/hint3600' }),
	() => ({ route: `/status/${pick([400, 404, 422])}` }),
	() => ({ route: '/drip', over: { deadlineMs: int(200, 500), maxAttempts: 1 } }),
	() => ({ route: '/hang', over: { deadlineMs: int(200, 400), maxAttempts: 1 } }),
	() => ({ route: '/reset-mid-body' }),
	() => ({ route: '/not-json', over: { requiredPath: 'choices.0' } }),
];

// The first three chains are anchors, so every output is exercised whatever the seed draws.
const ANCHORS = [
	() => ({ route: '/ok' }),
	() => ({ route: '/always500' }),
	() => ({ route: '/status/422' }),
];
const CHAIN = [];
for (let c = 0; c < CHAINS; c++) {
	const id = `${uid()}${c}`;
	const providerList = Array.from({ length: c < ANCHORS.length ? 1 : int(1, 4) }, (_, k) => {
		const r = (c < ANCHORS.length ? ANCHORS[c] : pick(ROUTES))();
		const over = { ...(r.over ?? {}) };
		if (!over.maxAttempts && rnd() < 0.5) over.maxAttempts = int(1, 3);
		return {
			name: `p${k}-${id}`,
			path: `${r.route}?id=${id}-${k}${r.q ? `&${r.q}` : ''}`,
			route: r.route,
			...over,
		};
	});
	CHAIN.push({
		name: `chain ${c}`,
		id,
		items: int(1, 12),
		providerList,
		concurrency: pick([1, 1, 2, 3, 4]),
		retryPolicy: {
			baseMs: int(5, 40),
			capMs: int(50, 150),
			maxAttempts: int(1, 3),
			budgetMs: int(1500, 3000),
			retryAfterCapMs: 1500,
			deferSpreadMs: pick([0, 500, 5000]),
		},
		breaker: { threshold: int(1, 3), openMs: pick([200, 60000]) },
		onExhaustion: rnd() < 0.2 && c >= ANCHORS.length ? 'default' : 'deferred',
	});
}

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	const n8n = n8nInstance(n8nInstall(major));
	const branches = CHAIN.map((c) => ({
		name: c.name,
		items: c.items,
		item: { chain: c.id },
		parameters: {
			providers: {
				provider: c.providerList.map(({ route, path, ...p }) => ({ ...p, url: `${base}${path}` })),
			},
			retryPolicy: c.retryPolicy,
			breaker: c.breaker,
			itemConcurrency: c.concurrency,
			onExhaustion: c.onExhaustion,
			...(c.onExhaustion === 'default' ? { defaultValueJson: '{"fallback": "default"}' } : {}),
		},
	}));
	const wf = branchesWorkflow(`neverlose${uid()}`, n8n.nodeType, branches);
	n8n.importWorkflow(wf);
	const t0 = Date.now();
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 150_000 }));
	console.log(
		`n8n ${major}: seed ${SEED}, ${CHAINS} random chains in one execution (${Date.now() - t0} ms)`,
	);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
	assert.equal(
		run.data.resultData.error,
		undefined,
		`the execution did not fail: ${JSON.stringify(run.data.resultData.error)?.slice(0, 500)}`,
	);
});
after(async () => providers?.close());

test('every item of every random chain leaves exactly once, paired with its input', () => {
	let items = 0;
	let lost = 0;
	const tally = { success: 0, degraded: 0, deferred: 0, failed: 0 };
	const problems = [];
	for (const c of CHAIN) {
		const [ok, deferred, failed] = outputs(run, c.name);
		items += c.items;
		const out = ok.length + deferred.length + failed.length;
		lost += Math.max(0, c.items - out);
		const where = `seed ${SEED}, ${c.name} (${c.providerList.map((p) => p.route).join(' > ')}, ${c.items} items, concurrency ${c.concurrency})`;
		if (out !== c.items)
			problems.push(
				`${where}: ${c.items} in, ${ok.length} + ${deferred.length} + ${failed.length} out`,
			);
		const paired = [...ok, ...deferred, ...failed]
			.map((x) => x.pairedItem?.item)
			.sort((a, b) => a - b);
		if (JSON.stringify(paired) !== JSON.stringify([...Array(c.items).keys()]))
			problems.push(`${where}: pairedItem ${JSON.stringify(paired)}`);
		for (const x of [...deferred, ...failed]) {
			if (x.json.n !== x.pairedItem.item + 1 || x.json.chain !== c.id)
				problems.push(`${where}: item ${x.pairedItem.item} carries the json of n=${x.json.n}`);
		}
		for (const x of ok) {
			const m = x.json._resilience;
			if (m.outcome === 'success') {
				tally.success++;
				const last = m.attempts.at(-1)?.outcome;
				if (!/^2\d\d$/.test(last ?? ''))
					problems.push(`${where}: success whose last attempt was ${last}`);
			} else if (
				m.outcome === 'degraded' &&
				c.onExhaustion === 'default' &&
				x.json.fallback === 'default'
			)
				tally.degraded++;
			else problems.push(`${where}: ${m.outcome} on the success output`);
		}
		for (const x of deferred) {
			tally.deferred++;
			if (x.json._resilience.outcome !== 'deferred' || Number.isNaN(Date.parse(x.json.retry_at)))
				problems.push(`${where}: deferred item without retry_at`);
		}
		for (const x of failed) {
			tally.failed++;
			if (!x.json.reason) problems.push(`${where}: failed item without a reason`);
		}
		for (const x of [...ok, ...deferred, ...failed]) {
			const m = x.json._resilience;
			if (m.totalMs > c.retryPolicy.budgetMs + 1000)
				problems.push(
					`${where}: item ${x.pairedItem.item} took ${m.totalMs} ms, budget ${c.retryPolicy.budgetMs} ms`,
				);
		}
	}
	console.log(
		`never lose: seed ${SEED}: ${CHAINS} chains, ${items} items tried, items lost: ${lost}; ${tally.success} success, ${tally.degraded} degraded, ${tally.deferred} deferred, ${tally.failed} failed`,
	);
	assert.deepEqual(problems, []);
	assert.equal(lost, 0);
	// The random draw must actually exercise every exit, or the property proves little.
	assert.ok(
		tally.success > 0 && tally.deferred > 0 && tally.failed > 0,
		`every output used: ${JSON.stringify(tally)}`,
	);
});
