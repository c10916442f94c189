// Counter writes are checked: in real n8n with the Postgres store, a counters table that refuses
// every write (a CHECK no count can pass) leaves the breaker rows written and the items served,
// and every item carries a warning that its counters were not written (never silence). The same
// execution against a writable table carries none and its counters arrive.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { postgresCredential } from '../support/store-credentials.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { PG_PORT, psql } from '../support/services.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const REFUSING = `rpc_refusing_${id}`;
const WRITABLE = `rpc_writable_${id}`;
let providers, run;

before(async () => {
	providers = await startProviders();
	psql(`CREATE TABLE ${REFUSING}_counters (scope text NOT NULL, provider text NOT NULL,
    name text NOT NULL, value bigint NOT NULL CHECK (value < 0), PRIMARY KEY (scope, provider, name))`);
	const n8n = n8nInstance(n8nInstall(major));
	n8n.importCredentials([
		postgresCredential('rpcCntPgCred01', 'counters postgres', PG_PORT, { maxConnections: 10 }),
	]);
	const branch = (name, table) => ({
		name,
		items: 2,
		parameters: {
			providers: {
				provider: [{ name: `ok-${id}`, url: `http://127.0.0.1:${providers.port}/ok?id=${id}` }],
			},
			stateStore: 'postgres',
			storeOptions: { tableName: table },
		},
		nodeSettings: {
			credentials: { postgres: { id: 'rpcCntPgCred01', name: 'counters postgres' } },
		},
	});
	const wf = branchesWorkflow(`counters${id}`, n8n.nodeType, [
		branch('Refusing', REFUSING),
		branch('Writable', WRITABLE),
	]);
	n8n.importWorkflow(wf);
	({ run } = await n8n.execute(wf.id));
});

after(async () => {
	await providers?.close();
	for (const t of [REFUSING, WRITABLE])
		psql(
			`DROP TABLE IF EXISTS ${t}, ${t}_counters, ${t}_event_claims, ${t}_event_consumers, ${t}_events`,
		);
});

test('a counters write the store refuses is a warning on every item; the items are still served', () => {
	const [served, deferred, failed] = outputs(run, 'Refusing');
	assert.equal(served.length, 2, JSON.stringify(outputs(run, 'Refusing')));
	assert.deepEqual([deferred.length, failed.length], [0, 0]);
	for (const item of served)
		assert.ok(
			item.json._resilience.warnings.some((w) =>
				/counters of scope "global" not written to the shared store/.test(w),
			),
			JSON.stringify(item.json._resilience),
		);
	assert.equal(psql(`SELECT count(*) FROM ${REFUSING}_counters`), '0');
});

test('control: a writable counters table gets the counts and the items no warning', () => {
	const [served] = outputs(run, 'Writable');
	assert.equal(served.length, 2);
	for (const item of served) assert.equal(item.json._resilience.warnings, undefined);
	assert.equal(
		psql(`SELECT value FROM ${WRITABLE}_counters WHERE provider = 'ok-${id}' AND name = 'calls'`),
		'2',
	);
});
