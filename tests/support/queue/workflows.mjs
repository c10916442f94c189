// The policies of a queue-mode run as webhook workflows, each an n8n feature or an honest
// equivalent of the simulator's policy of the same name:
//   retry_on_fail         HTTP Request with n8n's Retry On Fail (tries x wait), then the execution fails
//   sleep_loop            HTTP Request -> If 200 -> done, else Wait 1 s -> the request again, forever
//   per_process_breakers  this node with the in-memory store: one breaker per worker process
//   shared_store          this node with the Redis store and a shared soft limit
// Every request carries x-worker (the worker's RPC_WORKER); a finished execution calls /done.
import { randomUUID } from 'node:crypto';
import { link, node } from '../workflow-parts.mjs';

const RETRY = {
	base_ms: 'baseMs',
	cap_ms: 'capMs',
	max_attempts: 'maxAttempts',
	deadline_ms: 'deadlineMs',
	budget_ms: 'budgetMs',
	retry_after_cap_ms: 'retryAfterCapMs',
	defer_spread_ms: 'deferSpreadMs',
	strategy: 'strategy',
};
const BREAKER = {
	threshold: 'threshold',
	window_ms: 'windowMs',
	open_ms: 'openMs',
	open_growth: 'openGrowth',
	open_max_ms: 'openMaxMs',
	half_open_probes: 'halfOpenProbes',
	successes_to_close: 'successesToClose',
	trip_rule: 'tripRule',
};

/** The scenario's `engine` settings (ChainConfig names) as the node's parameters. */
export function nodeSettings(engine = {}) {
	const retryPolicy = {},
		breaker = {};
	for (const [k, v] of Object.entries(engine)) {
		if (RETRY[k]) retryPolicy[RETRY[k]] = v;
		else if (BREAKER[k]) breaker[BREAKER[k]] = v;
		else throw new Error(`engine.${k}: no node parameter for it in the queue-mode run`);
	}
	return { retryPolicy, breaker };
}

const EXEC = "{{ $('Webhook').first().json.body.exec }}";

function webhook(path) {
	return node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		0,
		{ httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
		{ webhookId: randomUUID() },
	);
}
function done(base, policy, name = 'Done', route = 'done') {
	return node(name, 'n8n-nodes-base.httpRequest', 4.2, 900, {
		method: 'GET',
		url: `=${base}/${route}?policy=${policy}&exec=${EXEC}`,
		options: {},
	});
}
function httpCall(base, extraOptions = {}, extra = {}) {
	return node(
		'Call Vendor',
		'n8n-nodes-base.httpRequest',
		4.2,
		300,
		{
			method: 'GET',
			url: `=${base}/api?exec=${EXEC}`,
			sendHeaders: true,
			headerParameters: { parameters: [{ name: 'x-worker', value: '={{ $env.RPC_WORKER }}' }] },
			options: { timeout: 10_000, ...extraOptions },
		},
		extra,
	);
}

export function workflow(policy, { base, tag, scenario, nodeType, redisCred }) {
	const path = `q-${policy}-${tag}`;
	const id = `q${policy.replace(/_/g, '').slice(0, 8)}${tag}`.slice(0, 16);
	let nodes, connections;
	if (policy === 'retry_on_fail') {
		const rof = scenario.retry_on_fail ?? { tries: 5, wait_ms: 1000 };
		nodes = [
			webhook(path),
			httpCall(base, {}, { retryOnFail: true, maxTries: rof.tries, waitBetweenTries: rof.wait_ms }),
			done(base, policy),
		];
		connections = link(['Webhook', ['Call Vendor']], ['Call Vendor', ['Done']]);
	} else if (policy === 'sleep_loop') {
		const wait = (scenario.sleep_loop?.wait_ms ?? 1000) / 1000;
		nodes = [
			webhook(path),
			httpCall(
				base,
				{ response: { response: { fullResponse: true, neverError: true } } },
				{ onError: 'continueRegularOutput' },
			),
			node('Served', 'n8n-nodes-base.if', 1, 600, {
				conditions: {
					number: [{ value1: '={{ $json.statusCode }}', operation: 'equal', value2: 200 }],
				},
			}),
			node(
				'Sleep',
				'n8n-nodes-base.wait',
				1.1,
				600,
				{ resume: 'timeInterval', amount: wait, unit: 'seconds' },
				{ webhookId: randomUUID() },
			),
			done(base, policy),
		];
		connections = link(
			['Webhook', ['Call Vendor']],
			['Call Vendor', ['Served']],
			['Served', ['Done', 'Sleep']],
			['Sleep', ['Call Vendor']],
		);
	} else if (policy === 'per_process_breakers' || policy === 'shared_store') {
		const shared = policy === 'shared_store';
		const q = scenario.vendor.quota;
		const soft =
			shared && q ? Math.max(1, Math.floor(q.requests * (scenario.soft_limit ?? 0.8))) : 0;
		const provider = {
			name: `vendor-${tag}-${policy}`,
			url: `=${base}/api?exec=${EXEC}`,
			headersJson: '={ "x-worker": "{{ $env.RPC_WORKER }}" }',
			...(soft
				? { rateLimitRequests: soft, rateLimitPeriodMs: q.period_ms ?? 1000, rateLimitBurst: 1 }
				: {}),
		};
		nodes = [
			webhook(path),
			node(
				'Chain',
				nodeType,
				1,
				300,
				{
					providers: { provider: [provider] },
					...nodeSettings(scenario.engine),
					stateStore: shared ? 'redis' : 'memory',
				},
				shared ? { credentials: { redis: redisCred } } : {},
			),
			// Deferred items come back at their retry_at (the simulator re-submits them then).
			node(
				'Until retry_at',
				'n8n-nodes-base.wait',
				1.1,
				600,
				{
					resume: 'timeInterval',
					unit: 'seconds',
					amount: '={{ Math.max(0.05, (new Date($json.retry_at).getTime() - Date.now()) / 1000) }}',
				},
				{ webhookId: randomUUID() },
			),
			done(base, policy),
			// An item given up (e.g. a 403 during a ban is not retryable) is lost to the caller.
			done(base, policy, 'Gave Up', 'failed'),
		];
		connections = link(
			['Webhook', ['Chain']],
			['Chain', ['Done', 'Until retry_at', 'Gave Up']],
			['Until retry_at', ['Chain']],
		);
	} else {
		throw new Error(`no queue-mode workflow for policy ${policy}`);
	}
	return {
		path,
		wf: {
			id,
			name: `queue ${policy}`,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes,
			connections,
		},
	};
}
