// Hedged chat calls (issue 30) in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node
// 20), the package installed as n8n's community installer does: a Basic LLM Chain (not streamed,
// one item at a time) over the Resilient Chat Model over two n8n OpenAI Chat Models on loopback
// vendors. Model 1 answers in 20 ms but 3 s for 1 call in 10 (calls 5, 15, 25: one per item, in
// order); Model 2 answers in 20 ms. The same workflow with Hedging off, then after a fixed 500 ms.
// Counted at the vendors:
// - every item answered, each served once;
// - with hedging, each slow call of Model 1 lost to its hedge: the vendor saw the connection
//   closed before it answered; Model 2 got the hedges but those aborted before they left (a fast
//   call on a loaded machine can outlast the delay, then answer first), nothing else; the
//   sub-node's run data shows the hedges;
// - the slowest model call with hedging is well below the slow share's 3 s, and the chain's time
//   well below the run without hedging.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	chatWorkflow,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { installLikeN8n } from '../e2e/clean-checkout.mjs';
import { packWorktree } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const KEYS = { openai: `sk-hedge-${id}`, anthropic: 'unused', gemini: 'unused' };
const ITEMS = 30;
const FAST = 20;
const SLOW = 3000;
const DELAY = 500;
/** Model 1's answer to its call k (one per item): every 10th slow, spread. */
const slow = (k) => k % 10 === 4;
let vendors, n8n;
const cred = {};
const built = {};

const vendorId = (tag, model) => `${tag}${model}${id}`;

function workflow(tag, retryPolicy) {
	const names = [`m1-${tag}-${id}`, `m2-${tag}-${id}`];
	const model = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: names.map((name) => ({ name })) },
			retryPolicy,
		},
		[700, 0],
		'Chain',
		[
			openAiModel('Model 1', cred[vendorId(tag, 'a')], [600, 200]),
			openAiModel('Model 2', cred[vendorId(tag, 'b')], [800, 200]),
		],
	);
	const wf = chatWorkflow(`hedge${tag}${id}`, {
		items: ITEMS,
		roots: ['Chain'],
		nodes: [llmChain('Chain', [700, -200]), ...model.nodes],
		models: model.models,
	});
	return { wf, names };
}

before(async () => {
	vendors = await startLlmVendors(KEYS);
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	for (const tag of ['plain', 'fixed'])
		for (const m of ['a', 'b'])
			cred[vendorId(tag, m)] = openAiCredential(vendors, vendorId(tag, m), KEYS.openai);
	n8n.importCredentials(Object.values(cred));
	built.plain = workflow('plain', {});
	built.fixed = workflow('fixed', { hedge: 'fixed', hedgeDelayMs: DELAY });
	n8n.importWorkflow([built.plain.wf, built.fixed.wf]);
});
after(async () => vendors?.close());

/** The sub-node's run-data entries: one per model call. */
const chatEntries = (run) =>
	(run.data.resultData.runData['Resilient Chat Model'] ?? []).map(
		(t) => t.data?.ai_languageModel?.[0]?.[0]?.json,
	);

async function run(tag) {
	const [a, b] = [vendorId(tag, 'a'), vendorId(tag, 'b')];
	vendors.script(
		a,
		Array.from({ length: ITEMS + 1 }, (_, k) => (slow(k) ? { delayMs: SLOW } : { delayMs: FAST })),
	);
	vendors.script(b, [{ delayMs: FAST }]);
	const { run: r, log } = await n8n.execute(built[tag].wf.id, { timeoutMs: 240_000 });
	assert.ok(r, log.slice(-6000));
	const chain = r.data.resultData.runData.Chain[0];
	const answered = chain.data.main[0] ?? [];
	const entries = chatEntries(r);
	const attempts = entries.flatMap((e) => e?.attempts ?? []);
	const atA = vendors.arrivals.filter((x) => x.id === a);
	const atB = vendors.arrivals.filter((x) => x.id === b);
	const ms = entries.map((e) => e?.totalMs ?? Infinity);
	const stats = {
		items: answered.length,
		errors: answered.filter((i) => i.json.error).length,
		calls: entries.length,
		requestsA: atA.length,
		requestsB: atB.length,
		slowA: atA.filter((x) => x.delayMs === SLOW).length,
		slowClosed: atA.filter((x) => x.delayMs === SLOW && x.clientClosed).length,
		closedA: atA.filter((x) => x.clientClosed).length,
		closedB: atB.filter((x) => x.clientClosed).length,
		hedges: attempts.filter((x) => x.hedge).length,
		hedgesAborted: attempts.filter((x) => x.hedge && x.outcome === 'abandoned').length,
		abandoned: attempts.filter((x) => x.outcome === 'abandoned').length,
		servedByB: entries.filter((e) => e?.provider === built[tag].names[1]).length,
		// Which calls were hedged, and who served them.
		hedgedCalls: entries.flatMap((e, k) =>
			e?.attempts?.some((x) => x.hedge)
				? [`${k}:${e.provider === built[tag].names[1] ? 2 : 1}`]
				: [],
		),
		maxCallMs: Math.max(...ms),
		chainMs: chain.executionTime,
	};
	console.log(`n8n ${major} ${tag}: ${JSON.stringify(stats)}`);
	return { stats, answered, entries, atA, atB };
}

const servedOnce = (entries) => {
	for (const [k, e] of entries.entries()) {
		assert.equal(e?.outcome, 'success', `call ${k}: ${JSON.stringify(e)}`);
		assert.equal(
			e.attempts.filter((x) => x.health === 'success').length,
			1,
			`call ${k} served once: ${JSON.stringify(e.attempts)}`,
		);
	}
};

let plain;
test(`n8n ${major}: without hedging, the items that meet Model 1's slow share wait its ${SLOW} ms`, async () => {
	plain = await run('plain');
	const { stats, answered, entries, atA } = plain;
	assert.equal(stats.items, ITEMS, 'every item answered');
	assert.equal(stats.errors, 0);
	assert.equal(stats.calls, ITEMS, 'one model call per item');
	servedOnce(entries);
	assert.equal(stats.requestsA, ITEMS, 'Model 1 served every item');
	assert.equal(stats.requestsB, 0);
	assert.equal(stats.hedges, 0);
	assert.equal(stats.slowA, ITEMS / 10, 'the slow share came');
	assert.equal(stats.closedA, 0, 'no call closed early: every slow one was waited for');
	assert.ok(atA.every((x) => x.status === 200));
	assert.ok(stats.maxCallMs >= SLOW, `slowest call ${stats.maxCallMs} ms`);
	for (const i of answered) assert.match(i.json.text, /^plaina\w+ says hi$/);
});

test(`n8n ${major}: hedging after ${DELAY} ms: every slow call closed before it answered, its hedge served the item, each item served once, the tail cut`, async () => {
	const { stats, answered, entries, atA, atB } = await run('fixed');
	assert.equal(stats.items, ITEMS, 'every item answered');
	assert.equal(stats.errors, 0);
	assert.equal(stats.calls, ITEMS, 'one model call per item');
	servedOnce(entries);
	for (const i of answered) assert.match(i.json.text, /^fixed[ab]\w+ says hi$/);
	assert.equal(stats.requestsA, ITEMS, 'Model 1 got each item first, once (no retries)');
	assert.equal(stats.slowA, ITEMS / 10, 'the slow share came');
	assert.equal(
		stats.slowClosed,
		stats.slowA,
		'every slow call of Model 1 lost to its hedge: closed by the client before it answered',
	);
	assert.ok(
		atA.filter((x) => x.delayMs === SLOW).every((x) => x.status === 0),
		'no slow call sent an answer',
	);
	assert.ok(stats.servedByB >= stats.slowA, `${stats.servedByB} items served by Model 2`);
	assert.equal(
		stats.servedByB,
		answered.filter((i) => /^fixedb/.test(i.json.text)).length,
		"the chain's answers are the run data's",
	);
	// The run data: one hedge per slow call at least, at most one per item (Max Hedges 1).
	assert.ok(
		stats.hedges >= stats.slowA && stats.hedges <= ITEMS,
		`${stats.hedges} hedges for ${stats.slowA} slow calls, ${ITEMS} items`,
	);
	for (const e of entries)
		assert.ok(e.attempts.filter((x) => x.hedge).length <= 1, JSON.stringify(e.attempts));
	// Model 2 got every hedge but those aborted before they left, and nothing else.
	assert.ok(
		atB.length <= stats.hedges && atB.length >= stats.hedges - stats.hedgesAborted,
		`Model 2 got ${atB.length} of ${stats.hedges} hedges (${stats.hedgesAborted} aborted)`,
	);
	// Each abandoned call is one closed at a vendor or one that never reached it.
	assert.ok(stats.closedA + stats.closedB <= stats.abandoned, JSON.stringify(stats));
	assert.equal(stats.abandoned, stats.hedges, 'every hedged item abandoned one call: the loser');
	// The tail: the slowest model call is far below the slow share's time, and the chain's time
	// well below the run without hedging (both loose: a loaded machine's timing).
	assert.ok(stats.maxCallMs < SLOW / 2, `slowest call ${stats.maxCallMs} ms with hedging`);
	if (plain)
		assert.ok(
			stats.chainMs < plain.stats.chainMs / 2,
			`chain ${stats.chainMs} ms, without hedging ${plain.stats.chainMs} ms`,
		);
});
