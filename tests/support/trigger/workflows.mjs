// Workflows of the trigger test: a webhook that calls one provider through the chain (then
// reports to /done), a trigger that reports each event to /sink/<tag>, and the metrics endpoint
// (Webhook -> Get Metrics -> Respond to Webhook), the same shape as n8n-node/examples/.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../n8n.mjs';
import { postgresCredential, redisCredential } from '../store-credentials.mjs';
import { link, node } from '../workflow-parts.mjs';

const wf = (id, name, nodes, connections) => ({
	id,
	name,
	active: false,
	settings: { executionOrder: 'v1' },
	nodes,
	connections,
});

export const creds = (redisPort, pgPort) => [
	redisCredential('rpcTrigRedis01', 'trigger redis', redisPort),
	postgresCredential('rpcTrigPg01', 'trigger postgres', pgPort, { maxConnections: 10 }),
];
export const OPEN_MS = 45_000;
const credOf = (store) =>
	({
		redis: { redis: { id: 'rpcTrigRedis01', name: 'trigger redis' } },
		postgres: { postgres: { id: 'rpcTrigPg01', name: 'trigger postgres' } },
	})[store];

/** The chain every workflow of a store shares: one provider, 5 failures open it for 45 s (longer
 * than the 40 executions take on a loaded machine: no probe may fail among them); a 5 s item
 * budget, so an item that meets the open breaker is deferred at once rather than waiting it out. */
function chain(nodeType, store, provider, base, extra = {}) {
	return node(
		'Chain',
		nodeType,
		1,
		300,
		{
			providers: { provider: [{ name: provider, url: `${base}/v/${store}` }] },
			retryPolicy: { maxAttempts: 1, budgetMs: 5_000 },
			breaker: { threshold: 5, openMs: OPEN_MS, halfOpenProbes: 1 },
			stateStore: store,
			...extra,
		},
		{ credentials: credOf(store) },
	);
}

export function callWorkflow(nodeType, store, provider, base, tag) {
	const done = node('Done', 'n8n-nodes-base.httpRequest', 4.2, 600, {
		method: 'GET',
		url: `${base}/done/${store}`,
		options: {},
	});
	return {
		path: `trg-call-${store}-${tag}`,
		wf: wf(
			`trgcall${store.slice(0, 1)}${tag}`.slice(0, 16),
			`call ${store}`,
			[
				node(
					'Webhook',
					'n8n-nodes-base.webhook',
					2,
					0,
					{
						httpMethod: 'POST',
						path: `trg-call-${store}-${tag}`,
						responseMode: 'onReceived',
						options: {},
					},
					{ webhookId: randomUUID() },
				),
				chain(nodeType, store, provider, base),
				done,
			],
			link(['Webhook', ['Chain']], ['Chain', ['Done', 'Done', 'Done']]),
		),
	};
}

export function triggerWorkflow(triggerType, store, base, sink, id) {
	return wf(
		id,
		`trigger ${sink}`,
		[
			node(
				'Breaker Transition',
				triggerType,
				1,
				0,
				{ stateStore: store, stateScope: 'provider', events: ['open', 'closed'] },
				{ credentials: credOf(store) },
			),
			node('Report', 'n8n-nodes-base.httpRequest', 4.2, 300, {
				method: 'GET',
				url: `=${base}/sink/${sink}?from={{ $json.from }}&to={{ $json.to }}&provider={{ encodeURIComponent($json.provider) }}&trips={{ $json.trips }}&scope={{ $json.scope }}&at_ms={{ $json.at_ms }}&execution={{ $execution.id }}`,
				options: {},
			}),
		],
		link(['Breaker Transition', ['Report']]),
	);
}

/** n8n-node/examples/metrics-workflow.json, pointed at this test's provider, store and path. */
export function metricsWorkflow(nodeType, store, provider, base, tag) {
	const wf = JSON.parse(
		readFileSync(path.join(ROOT, 'n8n-node/examples/metrics-workflow.json'), 'utf8'),
	);
	const path_ = `trg-metrics-${tag}`;
	wf.id = `trgmetrics${tag}`.slice(0, 16);
	for (const n of wf.nodes) {
		if (n.type === 'n8n-nodes-base.webhook') {
			n.parameters.path = path_;
			n.webhookId = randomUUID();
		}
		if (n.type === 'n8n-nodes-resilient-provider-call.resilientProviderCall') {
			n.type = nodeType;
			n.parameters.providers = { provider: [{ name: provider }] }; // names are all it reads
			n.parameters.stateStore = store;
			n.credentials = credOf(store);
		}
	}
	return { path: path_, wf };
}
