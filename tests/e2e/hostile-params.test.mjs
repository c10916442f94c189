// Hostile node parameters in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20):
// a table of bad inputs (empty chain, duplicate names, URLs without scheme, non-JSON
// body/headers/query, negative, fractional, textual and huge numbers, threshold 0, cap < base,
// unknown options, a 10 MB header value, ...). Each row is a branch of ONE workflow run by ONE
// `n8n execute`; every branch but the last continues on error so the others still run, and must
// end with its item on the failed output, carrying a message that names the field (and the
// provider, for a provider's field), no stack trace, and no request at the provider: never a
// silent default. The last
// branch does not continue on error: the execution itself must fail with a NodeOperationError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { postgresCredential, redisCredential } from '../support/store-credentials.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, uid } from '../support/n8n.mjs';
import { REDIS_PORT, PG_PORT } from '../support/services.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
let providers, base, run, log;
const ROWS = [];
/** `params(P)` builds the node parameters; P(over) is a valid provider with overrides. */
function row(name, params, expect) {
	ROWS.push({ name, params, expect });
}
const chain = (...list) => ({ providers: { provider: list } });

row('empty chain', () => chain(), /Add at least one provider to the chain \("Providers"\)/);
row('no providers parameter', () => ({}), /Add at least one provider to the chain \("Providers"\)/);
row(
	'duplicate provider names',
	(P) => chain(P({ name: 'dup' }), P({ name: 'dup' })),
	/Provider "dup" \(providers\[1\]\) name: 'dup' appears twice in the chain/,
);
row(
	'blank provider name',
	(P) => chain(P({ name: 'a' }), P({ name: '   ' })),
	/Provider "#2" \(providers\[1\]\) name: must be 1 to 200 characters/,
);
row(
	'201-character name',
	(P) => chain(P({ name: 'n'.repeat(201) })),
	/\(providers\[0\]\) name: must be 1 to 200 characters/,
);
row(
	'URL without scheme',
	(P) => chain(P({ url: 'api.example.com/v1/chat' })),
	/Provider "p" \(providers\[0\]\): "URL" must start with http:\/\/ or https:\/\/, got "api\.example\.com\/v1\/chat"/,
);
row(
	'ftp URL',
	(P) => chain(P({ name: 'a' }), P({ name: 'b', url: 'ftp://files.example.com/x' })),
	/Provider "b" \(providers\[1\]\): "URL" must start with http/,
);
row(
	'javascript: URL',
	(P) => chain(P({ url: 'javascript:alert(1)' })),
	/Provider "p" \(providers\[0\]\): "URL" must start with http/,
);
row(
	'scheme without host',
	(P) => chain(P({ url: 'http://' })),
	/Provider "p" \(providers\[0\]\): "URL" must start with http/,
);
row(
	'non-JSON body',
	(P) => chain(P({ method: 'POST', bodyJson: '{"model": "x",' })),
	/Provider "p" \(providers\[0\]\): "Body \(JSON\)" is not valid JSON/,
);
row(
	'non-JSON headers',
	(P) => chain(P({ headersJson: 'Authorization: Bearer x' })),
	/Provider "p" \(providers\[0\]\): "Headers \(JSON\)" is not valid JSON/,
);
row(
	'headers as an array',
	(P) => chain(P({ headersJson: '[1, 2]' })),
	/Provider "p" \(providers\[0\]\): "Headers \(JSON\)" must be a JSON object/,
);
row(
	'non-JSON query',
	(P) => chain(P({ queryJson: 'a=1&b=2' })),
	/Provider "p" \(providers\[0\]\): "Query \(JSON\)" is not valid JSON/,
);
row(
	'query null',
	(P) => chain(P({ queryJson: 'null' })),
	/Provider "p" \(providers\[0\]\): "Query \(JSON\)" must be a JSON object/,
);
row(
	'10 MB header value',
	(P) =>
		chain(P({ headersJson: '={{ JSON.stringify({ "X-Big": "a".repeat(10 * 1024 * 1024) }) }}' })),
	/Provider "p" \(providers\[0\]\): "Headers \(JSON\)" is larger than 1 MB/,
);
row(
	'9 KB header value',
	(P) => chain(P({ headersJson: JSON.stringify({ 'X-Big': 'b'.repeat(9 * 1024) }) })),
	/Provider "p" \(providers\[0\]\): header "X-Big" is longer than 8 KB/,
);
row(
	'negative provider threshold',
	(P) => chain(P({ name: 'a' }), P({ name: 'b', threshold: -3 })),
	/Provider "b" \(providers\[1\]\) threshold: must be between 1 and 10000, got -3/,
);
row(
	'negative provider attempts',
	(P) => chain(P({ maxAttempts: -1 })),
	/Provider "p" \(providers\[0\]\) max_attempts: must be between 1 and 100, got -1/,
);
row(
	'negative provider deadline',
	(P) => chain(P({ deadlineMs: -5 })),
	/Provider "p" \(providers\[0\]\) deadline_ms: must be between 1 and 86400000 ms, got -5/,
);
row(
	'huge provider deadline',
	(P) => chain(P({ deadlineMs: 1e12 })),
	/Provider "p" \(providers\[0\]\) deadline_ms: must be between 1 and 86400000 ms, got 1000000000000/,
);
row(
	'huge provider open window',
	(P) => chain(P({ openMs: 9e15 })),
	/Provider "p" \(providers\[0\]\) open_ms: must be between/,
);
row(
	'provider threshold as text',
	(P) => chain(P({ threshold: 'five' })),
	/Provider "p" \(providers\[0\]\): "threshold" must be a whole number, got "five"/,
);
row(
	'negative rate limit',
	(P) => chain(P({ rateLimitRequests: -1 })),
	/Provider "p" \(providers\[0\]\) rate_limit\.requests: must be between 1/,
);
row(
	'rate limit period 0',
	(P) => chain(P({ rateLimitRequests: 5, rateLimitPeriodMs: 0 })),
	/Provider "p" \(providers\[0\]\) rate_limit\.period_ms: must be between 1/,
);
row(
	'negative max in flight',
	(P) => chain(P({ maxInFlight: -2 })),
	/Provider "p" \(providers\[0\]\) max_in_flight: must be between 1/,
);
row(
	'unknown method',
	(P) => chain(P({ method: 'TRACE' })),
	/Provider "p" \(providers\[0\]\) method: unsupported method 'TRACE'/,
);
row(
	'secret missing from the credential',
	(P) => chain(P({ secretName: 'nope' })),
	/Provider "p": secret "nope" is not in the Resilient Provider Secrets credential/,
);
row(
	'node threshold 0',
	(P) => ({ ...chain(P()), breaker: { threshold: 0 } }),
	/Invalid parameter: threshold: must be between 1 and 10000, got 0/,
);
row(
	'node threshold negative',
	(P) => ({ ...chain(P()), breaker: { threshold: -1 } }),
	/Invalid parameter: threshold: must be between 1 and 10000, got -1/,
);
row(
	'cap below base',
	(P) => ({ ...chain(P()), retryPolicy: { baseMs: 1000, capMs: 100 } }),
	/Invalid parameter: cap_ms: cap 100 ms is below base 1000 ms/,
);
row(
	'unknown strategy',
	(P) => ({ ...chain(P()), retryPolicy: { strategy: 'exponential' } }),
	/Invalid parameter: strategy: unknown strategy 'exponential'/,
);
row(
	'fractional attempts',
	(P) => ({ ...chain(P()), retryPolicy: { maxAttempts: 2.5 } }),
	/Retry Policy: "maxAttempts" must be a whole number, got "2.5"/,
);
row(
	'number beyond 2^53',
	(P) => ({ ...chain(P()), retryPolicy: { budgetMs: 1e300 } }),
	/Retry Policy: "budgetMs" must be a whole number, got "1e\+300"/,
);
row(
	'huge attempts',
	(P) => ({ ...chain(P()), retryPolicy: { maxAttempts: 1000000 } }),
	/Invalid parameter: max_attempts: must be between 1 and 100, got 1000000/,
);
row(
	'negative budget',
	(P) => ({ ...chain(P()), retryPolicy: { budgetMs: -1 } }),
	/Invalid parameter: budget_ms: must be between 1/,
);
row(
	'zero deadline',
	(P) => ({ ...chain(P()), retryPolicy: { deadlineMs: 0 } }),
	/Invalid parameter: deadline_ms: must be between 1/,
);
row(
	'negative Retry-After cap',
	(P) => ({ ...chain(P()), retryPolicy: { retryAfterCapMs: -1 } }),
	/Invalid parameter: retry_after_cap_ms: must be between 0/,
);
row(
	'garbage retry statuses',
	(P) => ({ ...chain(P()), retryPolicy: { retryStatuses: '5xx, teapot' } }),
	/Invalid parameter: retry_statuses: /,
);
row(
	'boolean as text',
	(P) => ({ ...chain(P()), retryPolicy: { count429: 'yes' } }),
	/Retry Policy: "count429" must be true or false, got "yes"/,
);
row(
	'unknown trip rule',
	(P) => ({ ...chain(P()), breaker: { tripRule: 'sometimes' } }),
	/Invalid parameter: trip_rule: unknown trip rule 'sometimes'/,
);
row(
	'failure rate above 1',
	(P) => ({ ...chain(P()), breaker: { tripRule: 'failure_rate', failureRate: 2 } }),
	/Invalid parameter: failure_rate: must be in \(0, 1\], got 2/,
);
row(
	'open window growth below 1',
	(P) => ({ ...chain(P()), breaker: { openGrowth: 0.5 } }),
	/Invalid parameter: open_growth: must be between 1 and 100, got 0.5/,
);
row(
	'max open window below open window',
	(P) => ({ ...chain(P()), breaker: { openMs: 60000, openMaxMs: 1000 } }),
	/Invalid parameter: open_max_ms: 1000 ms is below open_ms 60000 ms/,
);
row(
	'negative half-open probes',
	(P) => ({ ...chain(P()), breaker: { halfOpenProbes: -1 } }),
	/Invalid parameter: half_open_probes: must be between 0 and 1000, got -1/,
);
row(
	'item concurrency -5',
	(P) => ({ ...chain(P()), itemConcurrency: -5 }),
	/"Item Concurrency" \(itemConcurrency\) must be a whole number from 1 to 1000, got "-5"/,
);
row(
	'item concurrency text',
	(P) => ({ ...chain(P()), itemConcurrency: 'many' }),
	/"Item Concurrency" \(itemConcurrency\) must be a whole number from 1 to 1000, got "many"/,
);
row(
	'unknown state store',
	(P) => ({ ...chain(P()), stateStore: 'mongo' }),
	/"State Store" must be memory, redis or postgres, got "mongo"/,
);
row(
	'unknown state scope',
	(P) => ({ ...chain(P()), stateScope: 'everyone' }),
	/"State Scope" must be provider or workflow, got "everyone"/,
);
row(
	'unknown exhaustion mode',
	(P) => ({ ...chain(P()), onExhaustion: 'drop' }),
	/"On Exhaustion" must be deferred or default, got "drop"/,
);
row(
	'default value not JSON',
	(P) => ({ ...chain(P()), onExhaustion: 'default', defaultValueJson: '{answer: 42}' }),
	/"Default Value \(JSON\)" is not valid JSON/,
);
row(
	'unknown operation',
	(P) => ({ ...chain(P()), operation: 'nuke' }),
	/"Operation" must be callChain, getState or reset, got "nuke"/,
);
row(
	'store timeout 5 ms',
	(P) => ({ ...chain(P()), stateStore: 'redis', storeOptions: { operationTimeoutMs: 5 } }),
	/Store Options: "Operation Timeout \(ms\)" must be between 10 and 60000, got 5/,
);
row(
	'key prefix with braces',
	(P) => ({ ...chain(P()), stateStore: 'redis', storeOptions: { keyPrefix: 'rpc:{x}' } }),
	/Store Options: "Key Prefix" may hold only/,
);
row(
	'SQL in the table name',
	(P) => ({
		...chain(P()),
		stateStore: 'postgres',
		storeOptions: { tableName: 'state; DROP TABLE users' },
	}),
	/Store Options: "Table Name" must be a lower-case SQL identifier/,
);
// Last: without continue-on-fail, the execution itself fails with the NodeOperationError.
row(
	'raised: provider threshold 0 above a bad second provider',
	(P) => chain(P({ name: 'first' }), P({ name: 'second', threshold: -7 })),
	/Provider "second" \(providers\[1\]\) threshold: must be between 1 and 10000, got -7/,
);

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	const n8n = n8nInstance(n8nInstall(major));
	n8n.importCredentials([
		redisCredential('hpRedisCred001', 'redis', REDIS_PORT),
		postgresCredential('hpPgCred000001', 'postgres', PG_PORT),
	]);
	const branches = ROWS.map((r, k) => {
		r.id = uid();
		r.raise = k === ROWS.length - 1;
		const P = (over = {}) => ({ name: 'p', url: `${base}/ok?id=${r.id}`, ...over });
		const parameters = r.params(P);
		return {
			name: r.name,
			parameters,
			nodeSettings: {
				...(r.raise ? {} : { onError: 'continueRegularOutput' }),
				credentials: {
					redis: { id: 'hpRedisCred001', name: 'redis' },
					postgres: { id: 'hpPgCred000001', name: 'postgres' },
				},
			},
		};
	});
	const wf = branchesWorkflow(`hostileparams${uid()}`, n8n.nodeType, branches);
	n8n.importWorkflow(wf);
	const t0 = Date.now();
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 120_000 }));
	console.log(
		`n8n ${major}: ${ROWS.length} hostile parameter inputs tried in one execution (${Date.now() - t0} ms)`,
	);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => providers?.close());

const STACK = /\n\s+at |\bat [\w.<>]+ \(|node_modules|\.js:\d+|\.ts:\d+/;

test('every hostile input sends its item to the failed output with an error naming the field, no stack trace', () => {
	const bad = [];
	for (const r of ROWS.filter((x) => !x.raise)) {
		const rd = run.data.resultData.runData[r.name];
		if (!rd) {
			bad.push(`${r.name}: did not run`);
			continue;
		}
		const items = rd[0].data.main.flatMap((o) => o ?? []);
		const errors = items.map((x) => x.json.error).filter((e) => e !== undefined);
		if (items.length !== 1 || errors.length !== 1) {
			bad.push(
				`${r.name}: ${items.length} items, ${errors.length} errors: ${JSON.stringify(items.map((x) => x.json)).slice(0, 300)}`,
			);
			continue;
		}
		if ((rd[0].data.main[2] ?? []).length !== 1)
			bad.push(`${r.name}: the item did not leave on the failed output`);
		if (items[0].json._resilience?.reason !== 'node_error' || items[0].pairedItem?.item !== 0)
			bad.push(`${r.name}: not a paired node_error item`);
		const message = typeof errors[0] === 'string' ? errors[0] : errors[0].message;
		if (!r.expect.test(message))
			bad.push(`${r.name}: ${JSON.stringify(message)} does not match ${r.expect}`);
		if (STACK.test(message)) bad.push(`${r.name}: stack trace in ${JSON.stringify(message)}`);
		if (message.length > 600) bad.push(`${r.name}: message of ${message.length} chars`);
		if (items[0].json._resilience?.attempts?.length) bad.push(`${r.name}: attempts were made`);
	}
	assert.deepEqual(bad, []);
});

test('no hostile input reached a provider: nothing ran on a silent default', () => {
	const ids = new Set(ROWS.map((r) => r.id));
	const reached = providers.arrivals
		.filter((a) => ids.has(a.id))
		.map((a) => ROWS.find((r) => r.id === a.id).name);
	assert.deepEqual(reached, []);
});

test('without continue-on-fail the execution fails with the NodeOperationError, naming the provider and field', () => {
	const r = ROWS.at(-1);
	const err = run.data.resultData.error;
	assert.ok(err, 'the execution failed');
	assert.equal(
		err.name ?? err.constructor?.name,
		'NodeOperationError',
		JSON.stringify(err).slice(0, 500),
	);
	assert.match(err.message, r.expect);
	assert.doesNotMatch(err.message, STACK);
	assert.equal(err.node?.name ?? run.data.resultData.lastNodeExecuted, r.name);
	const nodeError = run.data.resultData.runData[r.name][0].error;
	assert.match(nodeError.message, r.expect);
	assert.match(
		nodeError.description ?? '',
		/providers\[1\]\.threshold: must be between 1 and 10000, got -7/,
	);
});
