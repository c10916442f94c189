// Used as an AI tool, the node answers on output 0 only, one structured result per item.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { toolResult, runsAsTool } = require('../../dist/lib/toolResult.js');

test('success, deferred and failed items become one structured result each on output 0', () => {
	const out = [
		[
			{
				json: { answer: 42, _resilience: { outcome: 'success', provider: 'a' } },
				pairedItem: { item: 1 },
			},
		],
		[
			{
				json: {
					q: 1,
					retry_at: 'T',
					_resilience: { outcome: 'deferred', reason: 'circuit_open', retry_at: 'T' },
				},
				pairedItem: { item: 0 },
			},
		],
		[
			{
				json: { q: 2, _resilience: { outcome: 'failed', reason: 'non_retryable' } },
				pairedItem: { item: 2 },
			},
		],
	];
	const [only, ...rest] = toolResult(out);
	assert.equal(rest.length, 0);
	assert.deepEqual(
		only.map((i) => i.json.status),
		['deferred', 'success', 'failed'],
	);
	assert.deepEqual(only[1].json, {
		status: 'success',
		provider: 'a',
		reason: null,
		retry_at: null,
		result: { answer: 42 },
	});
	assert.equal(only[0].json.reason, 'circuit_open');
	assert.equal(only[0].json.retry_at, 'T');
	// On Exhaustion "default": the Default Value, said degraded, with why the chain gave up.
	const degraded = {
		json: {
			fallback: 'sorry',
			_resilience: { outcome: 'degraded', reason: 'circuit_open', retry_at: 'T' },
		},
		pairedItem: { item: 0 },
	};
	assert.deepEqual(toolResult([[degraded], [], []])[0][0].json, {
		status: 'degraded',
		provider: null,
		reason: 'circuit_open',
		retry_at: 'T',
		result: { fallback: 'sorry' },
	});
});

test('tool mode is recognised by the generated Tool node type or the ai_tool rewiring', () => {
	assert.equal(
		runsAsTool({ type: 'n8n-nodes-resilient-provider-call.resilientProviderCallTool' }),
		true,
	);
	assert.equal(runsAsTool({ type: 'x.resilientProviderCall', rewireOutputLogTo: 'ai_tool' }), true);
	assert.equal(runsAsTool({ type: 'x.resilientProviderCall' }), false);
});
