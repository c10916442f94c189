// Answer Check in a real n8n, counted at loopback vendors speaking OpenAI's chat completions:
// Call Chain 2.1 over three providers, A answering text that is not JSON on a third of its calls,
// B cutting every fourth answer at its token limit, C answering valid JSON: every item is served
// with JSON that satisfies the schema; the per-vendor counts equal the run data's; the schema misses
// and cut answers left A's and B's shared breakers alone (Get Metrics after the chain). A
// content-policy 400 and a refusal move the call on without counting against their vendor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { startProviders } from '../support/providers.mjs';

const require = createRequire(import.meta.url);
const { Validator } = require('@cfworker/json-schema');
const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
const ITEMS = 100;
const BRIEF = {
	$schema: 'https://json-schema.org/draft/2020-12/schema',
	type: 'object',
	required: ['title', 'words', 'tags', 'by'],
	additionalProperties: false,
	properties: {
		title: { type: 'string', minLength: 3 },
		words: { type: 'integer', minimum: 1 },
		tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
		by: { type: 'string' },
	},
};
let providers, base, run;

const llm = (name, mode) => ({
	name: `${name}-${tag}`,
	kind: 'openAiChat',
	model: 'gpt-4o-mini',
	userMessage: '={{ "Write brief " + $json.n }}',
	openAiChatOptions: { baseUrl: `${base}/answers/${mode}/${name}-${tag}` },
});

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	const n8n = n8nInstance(n8nInstall(major));
	const chain = (name, rows, items, answerCheck) => ({
		name,
		items,
		typeVersion: 2.1,
		parameters: { providers: { provider: rows }, answerCheck },
		then: [
			{
				name: `${name} metrics`,
				typeVersion: 2.1,
				parameters: { operation: 'getMetrics', providers: { provider: rows } },
			},
		],
	});
	const wf = branchesWorkflow(`answers${tag}`, n8n.nodeType, [
		chain('three vendors', [llm('A', 'badjson3'), llm('B', 'cut4'), llm('C', 'valid')], ITEMS, {
			jsonSchema: JSON.stringify(BRIEF),
		}),
		chain('policy', [llm('P', 'policy400'), llm('R', 'refusal'), llm('V', 'valid')], 3, {}),
		chain('repair', [llm('F', 'repairable'), llm('G', 'valid')], 4, {
			jsonSchema: JSON.stringify(BRIEF),
			repairRound: true,
		}),
		chain('all bad', [llm('X', 'badjson3'), llm('Y', 'cut4')], 1, {
			jsonSchema: JSON.stringify({ ...BRIEF, required: ['missing'] }),
		}),
	]);
	n8n.importWorkflow(wf);
	const done = await n8n.execute(wf.id, { timeoutMs: 300_000 });
	assert.ok(done.run, done.log.slice(-4000));
	run = done.run;
});
after(async () => providers?.close());

const placed = (name) => outputs(run, name).map((o) => (o ?? []).map((i) => i.json));
const arrivalsOf = (id) => providers.arrivals.filter((a) => a.id === `${id}-${tag}`);
const metricsText = (name) => placed(name)[0][0].metrics;
/** A sample's value: `metric{scope="global",provider="…"[,check="…"]}`. */
function metricValue(text, metric, { provider, check }) {
	const labels = `{scope="global",provider="${provider}"${check ? `,check="${check}"` : ''}}`;
	const line = text.split('\n').find((l) => l.startsWith(`${metric}${labels} `));
	return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test('100 items over a vendor answering broken JSON and one cutting answers: all served, each valid against the schema', () => {
	const [served, deferred, failed] = placed('three vendors');
	assert.equal(
		served.length,
		ITEMS,
		JSON.stringify(deferred[0] ?? failed[0] ?? null).slice(0, 800),
	);
	const v = new Validator(BRIEF, '2020-12', false);
	for (const j of served) {
		assert.ok(v.validate(j.parsed).valid, JSON.stringify(j.parsed));
		assert.deepEqual(j._resilience.checks, ['not_empty', 'not_cut', 'not_refused', 'schema']);
	}
	const byProvider = (p) => served.filter((j) => j._resilience.provider === `${p}-${tag}`).length;
	console.log(
		`n8n ${major}: served by A ${byProvider('A')}, B ${byProvider('B')}, C ${byProvider('C')}; fallbacks ${served.filter((j) => j._resilience.fallback).length}`,
	);
	assert.ok(byProvider('B') > 0 && byProvider('C') > 0, 'the fallbacks served the misses');
});

test("the vendors' counts equal the run data's, and every miss is logged with its check", () => {
	const [served] = placed('three vendors');
	const attempts = served.flatMap((j) => j._resilience.attempts);
	for (const p of ['A', 'B', 'C']) {
		const mine = attempts.filter((a) => a.name === `${p}-${tag}`);
		assert.equal(mine.length, arrivalsOf(p).length, `${p}: run data vs vendor`);
	}
	const bad = arrivalsOf('A').filter((a) => a.answered === 'bad').length;
	const cut = arrivalsOf('B').filter((a) => a.answered === 'cut').length;
	assert.ok(bad >= 30 && cut >= 1, `A answered ${bad} broken, B ${cut} cut`);
	const checks = (p, c) => attempts.filter((a) => a.name === `${p}-${tag}` && a.check === c);
	assert.equal(checks('A', 'schema').length, bad);
	assert.equal(checks('B', 'cut').length, cut);
	assert.ok(checks('A', 'schema').every((a) => a.errors?.[0]?.message.startsWith('not JSON')));
	assert.ok(attempts.filter((a) => a.check).every((a) => a.health === 'neutral'));
});

test("schema misses and cut answers leave the providers' shared breakers alone; Get Metrics counts them by check", () => {
	const text = metricsText('three vendors metrics');
	const at = (metric, labels) => metricValue(text, metric, labels);
	const bad = arrivalsOf('A').filter((a) => a.answered === 'bad').length;
	const cut = arrivalsOf('B').filter((a) => a.answered === 'cut').length;
	for (const p of ['A', 'B']) {
		assert.equal(at('resilient_provider_failures_total', { provider: `${p}-${tag}` }), 0, p);
		assert.equal(at('resilient_provider_state', { provider: `${p}-${tag}` }), 0, `${p} closed`);
	}
	assert.equal(
		at('resilient_provider_check_failures_total', { provider: `A-${tag}`, check: 'schema' }),
		bad,
	);
	assert.equal(
		at('resilient_provider_check_failures_total', { provider: `B-${tag}`, check: 'cut' }),
		cut,
	);
});

test('a content-policy 400 and a refusal move the call on, counted against neither vendor', () => {
	const [served] = placed('policy');
	assert.equal(served.length, 3);
	assert.ok(served.every((j) => j._resilience.provider === `V-${tag}` && j._resilience.fallback));
	const attempts = served.flatMap((j) => j._resilience.attempts);
	assert.ok(
		attempts
			.filter((a) => a.name !== `V-${tag}`)
			.every((a) => a.check === 'content_policy' && a.health === 'neutral'),
		JSON.stringify(attempts.slice(0, 3)),
	);
	assert.equal(arrivalsOf('P').length, 3, 'one call each: not repeated on the same vendor');
	const text = metricsText('policy metrics');
	for (const p of ['P', 'R'])
		assert.equal(
			metricValue(text, 'resilient_provider_failures_total', { provider: `${p}-${tag}` }),
			0,
		);
});

test('with no provider left the item fails with the validation errors, never passed on as good', () => {
	const [served, deferred, failed] = placed('all bad');
	assert.equal(served.length + deferred.length, 0);
	assert.equal(failed.length, 1);
	const r = failed[0]._resilience;
	assert.equal(failed[0].reason, 'check_failed');
	assert.ok(
		Array.isArray(r.validation_errors) && r.validation_errors.length > 0,
		JSON.stringify(r),
	);
	// Each provider's errors under its name.
	const names = [`X-${tag}`, `Y-${tag}`];
	assert.ok(
		r.validation_errors.every((e) => names.includes(e.provider) && e.path !== undefined),
		JSON.stringify(r.validation_errors),
	);
	assert.ok(r.validation_errors.some((e) => e.provider === names[0]));
});

test('Repair Round: an answer off the schema gets one more call to the same provider with its errors, and that answer serves', () => {
	const [served] = placed('repair');
	assert.equal(served.length, 4);
	assert.ok(served.every((j) => j._resilience.provider === `F-${tag}` && !j._resilience.fallback));
	const calls = arrivalsOf('F');
	assert.equal(calls.length, 8, 'two calls per item: the answer and its repair round');
	assert.equal(calls.filter((a) => a.repairRound).length, 4);
	const repair = JSON.parse(calls.find((a) => a.repairRound).body);
	const [assistant, user] = repair.messages.slice(-2);
	assert.equal(assistant.role, 'assistant');
	assert.match(assistant.content, /^Sure! Here is the brief/);
	assert.match(user.content, /\(the whole answer\): not JSON/);
	assert.equal(arrivalsOf('G').length, 0, 'the fallback was never needed');
	const attempts = served.flatMap((j) => j._resilience.attempts);
	assert.equal(attempts.filter((a) => a.check === 'schema').length, 4);
});
