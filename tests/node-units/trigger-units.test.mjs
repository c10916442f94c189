// The trigger's panel and payload, and where Get Metrics lives, from the built package (no n8n):
// the memory store's notice says it sees only its own process; an item is the engine's event
// text plus the watched scope, and only transitions asked for give one; Get Metrics is an
// operation of version 2 only (version 1 is frozen).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { NodeHelpers } = require('n8n-workflow');
const {
	ResilientProviderTrigger,
} = require('../../dist/nodes/ResilientProviderTrigger/ResilientProviderTrigger.node.js');
const {
	ResilientProviderCall,
} = require('../../dist/nodes/ResilientProviderCall/ResilientProviderCall.node.js');
const { triggerPayload } = require('../../dist/lib/trigger/payload.js');

const trigger = new ResilientProviderTrigger().description;

test('the package registers the trigger, and its panel warns that memory sees only its own process', () => {
	const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url)));
	assert.ok(
		pkg.n8n.nodes.includes('dist/nodes/ResilientProviderTrigger/ResilientProviderTrigger.node.js'),
	);
	assert.deepEqual(trigger.group, ['trigger']);
	assert.deepEqual(trigger.inputs, []);
	const notice = trigger.properties.find((p) => p.type === 'notice');
	assert.match(notice.displayName, /only the transitions made in its own n8n process/);
	assert.match(notice.displayName, /queue mode/);
	const shown = (stateStore) =>
		NodeHelpers.displayParameter({ stateStore }, notice, { typeVersion: 1 }, trigger);
	assert.equal(shown('memory'), true);
	assert.equal(shown('redis'), false);
});

test('a trigger item is the event as the engine wrote it, with the scope; unwanted transitions give none', () => {
	const event = JSON.stringify({
		provider: 'p "q"',
		from: 'closed',
		to: 'open',
		at: '2026-12-01T00:00:00.000Z',
		at_ms: 1796083200000,
		last_failure: '503',
		trips: 2,
	});
	assert.deepEqual(triggerPayload(event, 'wf:7', ['open', 'closed']), {
		provider: 'p "q"',
		scope: 'wf:7',
		...JSON.parse(event),
	});
	assert.equal(triggerPayload(event, 'global', ['closed']), undefined);
	const halfOpen = event.replace('"to":"open"', '"to":"half_open"');
	assert.equal(triggerPayload(halfOpen, 'global', ['open', 'closed']), undefined);
	assert.equal(triggerPayload(halfOpen, 'global', ['half_open']).to, 'half_open');
});

test('a spend cap reached fires only a trigger asked for it, alone or on a transition', () => {
	const capped = { spent: '0.012', cap: '0.01', until: '2026-12-05T00:00:00.000Z' };
	const alone = JSON.stringify({ provider: 'p', at: 'x', at_ms: 1, spend_cap: capped });
	assert.equal(triggerPayload(alone, 'global', ['open', 'closed']), undefined);
	assert.deepEqual(triggerPayload(alone, 'global', ['spendCapReached']).spend_cap, capped);
	const onClose = JSON.stringify({
		provider: 'p',
		from: 'half_open',
		to: 'closed',
		spend_cap: capped,
	});
	assert.equal(triggerPayload(onClose, 'global', ['spendCapReached']).to, 'closed');
	assert.equal(triggerPayload(onClose, 'global', ['closed']).spend_cap.cap, '0.01');
	assert.equal(triggerPayload(onClose, 'global', ['open']), undefined);
});

test('Get Metrics is an operation of version 2, not of the frozen version 1', () => {
	const node = new ResilientProviderCall();
	const ops = (v) =>
		node.nodeVersions[v].description.properties
			.find((p) => p.name === 'operation')
			.options.map((o) => o.value);
	assert.ok(ops(2).includes('getMetrics'));
	assert.ok(!ops(1).includes('getMetrics'));
});
