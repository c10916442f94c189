// Injection through the state stores, against the real Redis and Postgres servers
// (scripts/lib/services.sh start; a missing server fails these tests, it never skips them):
// - Redis: provider names and scopes holding { } : * % newlines quotes spaces and Unicode
//   whitespace stay inside their own key, under their scope's hash tag; two different names
//   never share a key; another chain's rows are untouched (checked with SCAN over the prefix
//   and byte-for-byte GETs). Hostile key prefixes are refused by the node's parameter check.
// - Postgres: hostile table names are refused with a clear error before any SQL runs;
//   provider names and scopes such as  x'); DROP TABLE t; --  are stored verbatim as data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import {
	ROOT,
	engine,
	plan,
	runOne,
	RedisStore,
	PostgresStore,
	redisClient,
	postgresPool,
	closeRedisClients,
	closePostgresPools,
	REDIS_PORT,
	PG_PORT,
	PG_CONNECTION,
	stateOf,
} from '../support/store-harness.mjs';

const require = createRequire(import.meta.url);
const { storeSettings } = require(path.join(ROOT, 'dist/lib/store/open.js'));

let providers, base, redis, pool;
const uid = () => Math.random().toString(36).slice(2, 10);
let tried = 0;

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	redis = redisClient({ host: '127.0.0.1', port: REDIS_PORT });
	assert.equal(
		await redis.ping(),
		'PONG',
		`Redis must run on 127.0.0.1:${REDIS_PORT} (bash scripts/lib/services.sh start)`,
	);
	pool = postgresPool(PG_CONNECTION);
	assert.equal(
		(await pool.query('SELECT 1 AS one')).rows[0].one,
		1,
		`Postgres must run on 127.0.0.1:${PG_PORT}`,
	);
});
after(async () => {
	console.log(`injection: ${tried} hostile names, scopes, prefixes and table names tried`);
	await providers?.close();
	await closeRedisClients();
	await closePostgresPools();
});

const HOSTILE_NAMES = [
	'a{b}c',
	'{',
	'}',
	'{}',
	'}{',
	'x}:victim:breaker',
	'x:breaker',
	'*',
	'a*b',
	'?[a-z]',
	'line\nbreak',
	'cr\r\nlf',
	'tab\there',
	'"double"',
	"'single'",
	'`back`',
	'a b',
	'a 28b',
	'a\u2028b',
	'a 00b',
	'a\u2000b',
	'%',
	'%7b',
	'%257b',
	'ü€😀',
	'a\\b',
	'ok',
];

/** Trip a provider's breaker (one 500, threshold 1): the store gets a breaker row under its name
 * (and nothing else: the retry budget, whose row is named by the same `key`, is off here). */
async function trip(store, scope, names) {
	const p = plan(
		names.map((name) => ({
			name,
			url: `${base}/always500?id=${scope}`,
			config: { max_attempts: 1 },
		})),
		{ threshold: 1, open_ms: 600_000, defer_spread_ms: 0, retry_budget_percent: 0 },
		scope,
	);
	const eng = new engine.Engine(p.config);
	try {
		const r = await runOne(store, p, eng, 'inj');
		assert.equal(r.storeFallback, undefined, `no store fallback: ${r.storeFallback}`);
		return r;
	} finally {
		eng.free();
	}
}

async function scanAll(pattern) {
	const keys = [];
	let cursor = '0';
	do {
		const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
		keys.push(...batch);
		cursor = next;
	} while (cursor !== '0');
	return keys.sort();
}
const snapshot = async (keys) =>
	Object.fromEntries(
		await Promise.all(keys.map(async (k) => [k, [await redis.type(k), await redis.dump(k)]])),
	);
const escapeGlob = (s) => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

test('redis: hostile provider names stay in their own keys, under their scope, and never touch another chain', async () => {
	const id = uid();
	const prefix = `inj-${id}:`;
	// The victim: another chain (scope) whose provider is called "victim", tripped first.
	const victimScope = 'victim';
	const victim = new RedisStore(redis, victimScope, prefix);
	await trip(victim, victimScope, ['victim']);
	await victim.addCounters({ victim: { calls: 7 } });
	const victimKeys = await scanAll(`${escapeGlob(prefix)}{victim}*`);
	// The trip's event went to the scope's stream: it must stay untouched like the rows.
	assert.deepEqual(victimKeys, [
		`${prefix}{victim}:events`,
		`${prefix}{victim}:victim:breaker`,
		`${prefix}{victim}:victim:counters`,
	]);
	const victimBefore = await snapshot(victimKeys);

	// The attacker chains: hostile names in hostile scopes, some shaped like the victim's keys.
	const scopes = [
		'victim}:victim',
		'victim}',
		'{victim',
		'vic*',
		'victim\n',
		"victim'--",
		'victim:victim',
	];
	tried += scopes.length + HOSTILE_NAMES.length;
	for (const scope of scopes) {
		const store = new RedisStore(redis, scope, prefix);
		await trip(store, scope, HOSTILE_NAMES);
		await store.addCounters(Object.fromEntries(HOSTILE_NAMES.map((n) => [n, { calls: 1 }])));
		// Every hostile name reads back its own tripped breaker and its own counter, nobody else's.
		const snap = await store.read(HOSTILE_NAMES);
		HOSTILE_NAMES.forEach((_, i) =>
			assert.equal(
				stateOf(snap, i).state,
				'open',
				`${JSON.stringify(scope)} / ${JSON.stringify(HOSTILE_NAMES[i])}`,
			),
		);
		const counters = await store.readCounters(HOSTILE_NAMES);
		for (const n of HOSTILE_NAMES)
			assert.deepEqual(
				counters[n],
				{ calls: 1 },
				`counter of ${JSON.stringify(n)} in ${JSON.stringify(scope)}`,
			);
		// Keys: distinct per name, all under this scope's escaped hash tag, no raw separator inside.
		const names = HOSTILE_NAMES.map((n) => store.key(n, 'breaker'));
		assert.equal(
			new Set(names).size,
			HOSTILE_NAMES.length,
			`two names share a key in scope ${JSON.stringify(scope)}: ${names.filter((k, i) => names.indexOf(k) !== i)}`,
		);
		const tag = names[0].slice(prefix.length + 1, names[0].indexOf('}'));
		for (const k of [...names, ...HOSTILE_NAMES.map((n) => store.key(n, 'counters'))]) {
			assert.ok(
				k.startsWith(`${prefix}{${tag}}:`),
				`${JSON.stringify(k)} keeps the scope's hash tag`,
			);
			const rest = k.slice(prefix.length + tag.length + 3);
			assert.match(
				rest,
				/^[^{}:*\s]+:(breaker|counters)$/,
				`${JSON.stringify(k)}: the provider part holds no separator`,
			);
		}
		assert.doesNotMatch(tag, /[{}:*\s]/, `scope ${JSON.stringify(scope)} escaped in its tag`);
	}

	// Exactly the expected keys exist under the prefix, nothing else.
	const expected = new Set(victimKeys);
	for (const scope of scopes) {
		const store = new RedisStore(redis, scope, prefix);
		for (const n of HOSTILE_NAMES)
			for (const kind of ['breaker', 'counters']) expected.add(store.key(n, kind));
		expected.add(store.eventsKey()); // each scope's own stream of transition events
	}
	const all = await scanAll(`${escapeGlob(prefix)}*`);
	assert.deepEqual(all, [...expected].sort(), 'only the expected keys exist');
	assert.equal(all.length, 3 + scopes.length * (HOSTILE_NAMES.length * 2 + 1));

	// The victim's rows are byte-for-byte what they were.
	assert.deepEqual(
		await snapshot(victimKeys),
		victimBefore,
		"the other chain's rows are unchanged",
	);
	const v = await victim.read(['victim']);
	assert.equal(stateOf(v).trips, 1);
	assert.deepEqual((await victim.readCounters(['victim'])).victim, { calls: 7 });

	// Reset of a hostile name deletes its own keys only.
	const hostile = new RedisStore(redis, 'victim}:victim', prefix);
	await hostile.reset('victim:breaker');
	await hostile.reset('*');
	assert.deepEqual(
		await snapshot(victimKeys),
		victimBefore,
		'reset of look-alike names leaves the victim alone',
	);
	const left = await scanAll(`${escapeGlob(prefix)}*`);
	assert.deepEqual(
		left,
		[...expected]
			.filter((k) => k !== hostile.key('*', 'breaker') && k !== hostile.key('*', 'counters'))
			.sort(),
	);
	await redis.del(...left);
});

function fakeCtx(params) {
	return {
		getNode: () => ({
			id: 'n',
			name: 'Chain',
			type: 'CUSTOM.resilientProviderCall',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		}),
		getNodeParameter: (name, _i, fallback) => (name in params ? params[name] : fallback),
	};
}

test('the node refuses hostile key prefixes and table names with a clear error naming the field', () => {
	const prefixes = [
		'rpc{',
		'rpc}',
		'{x}',
		'a*',
		'a\nb',
		'a\r',
		'"q"',
		"'q'",
		'a b',
		'a?',
		'x'.repeat(65),
		'ü',
		'a\u0000',
	];
	for (const keyPrefix of prefixes) {
		assert.throws(
			() => storeSettings(fakeCtx({ stateStore: 'redis', storeOptions: { keyPrefix } })),
			(e) =>
				e.constructor.name === 'NodeOperationError' &&
				/"Key Prefix"/.test(e.message) &&
				!/\n\s+at /.test(e.message),
			JSON.stringify(keyPrefix),
		);
	}
	for (const keyPrefix of ['rpc:', 'team-a:rpc.', 'a:b:c_', ''])
		assert.equal(
			storeSettings(fakeCtx({ stateStore: 'redis', storeOptions: { keyPrefix } })).prefix,
			keyPrefix,
		);
	const tables = [
		't; DROP TABLE x',
		'T',
		'Upper',
		'"quoted"',
		"a'b",
		'a-b',
		'1abc',
		'pg_catalog.pg_class',
		'a b',
		'',
		'x'.repeat(64),
		'a\nb',
		'tbl--',
	];
	for (const tableName of tables) {
		assert.throws(
			() => storeSettings(fakeCtx({ stateStore: 'postgres', storeOptions: { tableName } })),
			(e) => e.constructor.name === 'NodeOperationError' && /"Table Name"/.test(e.message),
			JSON.stringify(tableName),
		);
		assert.throws(
			() => new PostgresStore(pool, 'scope', tableName),
			/table name [\s\S]* must match/,
			`store refuses ${JSON.stringify(tableName)}`,
		);
	}
	tried += prefixes.length + tables.length;
});

test('postgres: hostile provider names and scopes are data, never SQL', async () => {
	const id = uid();
	const table = `inj_${id}`;
	const canary = `canary_${id}`;
	await pool.query(`CREATE TABLE ${canary} (v int)`);
	await pool.query(`INSERT INTO ${canary} VALUES (42)`);
	const names = [
		`x'); DROP TABLE ${canary}; --`,
		`'; DELETE FROM ${table}; --`,
		`" OR 1=1 --`,
		`$1`,
		`\\'`,
		`a'b`,
		`a\u2028b`,
		'a 28b',
		'*',
		'line\nbreak',
		'ok',
	];
	const scope = `s'); DROP TABLE ${canary}; --`;
	const victimScope = `victim-${id}`;
	tried += names.length + 1;
	const victim = new PostgresStore(pool, victimScope, table);
	await trip(victim, victimScope, ['victim']);
	const before = (
		await pool.query(`SELECT provider, kind, version, data::text FROM ${table} WHERE scope = $1`, [
			victimScope,
		])
	).rows;
	assert.equal(before.length, 1);

	const store = new PostgresStore(pool, scope, table);
	await trip(store, scope, names);
	await store.addCounters(Object.fromEntries(names.map((n) => [n, { calls: 2 }])));
	await store.reset(`x' OR '1'='1`);

	assert.equal(
		(await pool.query(`SELECT v FROM ${canary}`)).rows[0].v,
		42,
		'the canary table is still there',
	);
	const rows = (
		await pool.query(
			`SELECT scope, provider, kind FROM ${table} WHERE scope <> $1 ORDER BY provider`,
			[victimScope],
		)
	).rows;
	assert.equal(rows.length, names.length, 'one breaker row per hostile name, no more');
	assert.deepEqual(
		new Set(rows.map((r) => r.provider)),
		new Set(names),
		'each hostile name stored verbatim as data',
	);
	assert.ok(rows.every((r) => r.scope === scope && r.kind === 'breaker'));
	const counters = await store.readCounters(names);
	for (const n of names) assert.deepEqual(counters[n], { calls: 2 }, JSON.stringify(n));
	assert.deepEqual(
		(
			await pool.query(
				`SELECT provider, kind, version, data::text FROM ${table} WHERE scope = $1`,
				[victimScope],
			)
		).rows,
		before,
		"the other chain's row is unchanged",
	);
	await pool.query(`DROP TABLE ${table}, ${table}_counters, ${canary}`);
});
