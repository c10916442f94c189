// The example workflow n8n-node/examples/deferred-retry.json in real n8n (N8N_MAJOR=2: 2.41.1;
// 1: 1.123.81), its two LLM providers pointed at the loopback vendors and its credentials at
// imported OpenAI and Anthropic credentials: the first round finds both vendors failing, the
// items leave on `deferred`, the Wait node holds them until their retry_at and sends them back,
// and the second round is served by Anthropic, in the one answer shape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nInstall, n8nInstance, ROOT, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: 'unused' };
const NODE = 'Ask an LLM';
let vendors, run, log;

before(async () => {
	vendors = await startLlmVendors(KEYS);
	// OpenAI is down throughout; Anthropic fails its first three requests (round one), then serves.
	vendors.script('openai', [503]);
	vendors.script('anthropic', [500, 500, 500, 500, 500, 500, 'ok']);
	const n8n = n8nInstance(n8nInstall(major));
	n8n.importCredentials([
		{
			id: 'exOpenAiCred001',
			name: 'OpenAI account',
			type: 'openAiApi',
			data: { apiKey: KEYS.openai },
		},
		{
			id: 'exAnthropicCr01',
			name: 'Anthropic account',
			type: 'anthropicApi',
			data: { apiKey: KEYS.anthropic },
		},
	]);
	const wf = JSON.parse(
		readFileSync(path.join(ROOT, 'n8n-node/examples/deferred-retry.json'), 'utf8')
			.replace('REPLACE_OPENAI_CREDENTIAL', 'exOpenAiCred001')
			.replace('REPLACE_ANTHROPIC_CREDENTIAL', 'exAnthropicCr01'),
	);
	wf.id = `deferred${uid()}`;
	const node = wf.nodes.find((n) => n.name === NODE);
	node.type = n8n.nodeType;
	const [openai, anthropic] = node.parameters.providers.provider;
	openai.openAiChatOptions.baseUrl = `${vendors.url('openai')}/v1`;
	anthropic.anthropicMessagesOptions.baseUrl = vendors.url('anthropic');
	// Short waits so the test takes seconds: the example keeps the defaults.
	Object.assign(node.parameters.retryPolicy, { baseMs: 20, capMs: 50, deferSpreadMs: 2000 });
	// No cooldown between the rounds: each round meets the vendors' scripts, not an open breaker.
	node.parameters.breaker = { threshold: 100 };
	n8n.importWorkflow(wf);
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 120_000 }));
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(() => vendors?.close());

test('round one defers both items, the Wait node sends them back at retry_at, Anthropic serves round two', () => {
	const runs = run.data.resultData.runData[NODE];
	assert.equal(runs.length, 2, 'the node ran twice: before and after the Wait');
	const [first, second] = runs.map((r) => r.data.main.map((o) => o ?? []));
	assert.deepEqual(
		first.map((o) => o.length),
		[0, 2, 0],
		'round one: both items on deferred',
	);
	assert.ok(first[1].every((x) => /^\d{4}-/.test(x.json.retry_at)));
	assert.deepEqual(
		second.map((o) => o.length),
		[2, 0, 0],
		'round two: both served',
	);
	for (const item of second[0]) {
		const { _resilience, ...answer } = item.json;
		assert.deepEqual(answer, {
			text: 'anthropic says hi',
			provider: 'anthropic',
			model: 'claude-3-5-haiku-latest',
			usage: { input_tokens: 11, output_tokens: 7 },
			finish_reason: 'stop',
		});
	}
	const waited = run.data.resultData.runData['Wait until retry_at'];
	assert.equal(waited.length, 1);
	assert.ok(
		vendors.arrivals.every((a) => a.accepted),
		'every request carried the right key',
	);
	assert.ok(vendors.accepted('anthropic') >= 7);
});
