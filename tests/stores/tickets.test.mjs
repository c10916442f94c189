// Guard tickets in each store (memory, real Redis, real Postgres): recorded with a time to live
// at Check, claimed once at Report. A ticket claimed twice, expired, edited, never issued or from
// another scope claims nothing; 20 reports racing for one ticket: exactly one wins. Then the
// guard's two halves through each store: a dead provider, threshold 3, ten checks each reported
// as a 500 → three tickets for it, the rest to the next provider; a second report of a ticket
// is refused and counts nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
	ROOT,
	engine,
	stores,
	plan,
	FailoverStore,
	quietLogger,
	redisClient,
	postgresPool,
	closeRedisClients,
	closePostgresPools,
	REDIS_PORT,
	PG_CONNECTION,
	stateOf,
} from '../support/store-harness.mjs';

const require = createRequire(import.meta.url);
const { MemoryTickets } = require(path.join(ROOT, 'dist/lib/store/tickets.js'));
const { RedisTickets } = require(path.join(ROOT, 'dist/lib/store/ticketsRedis.js'));
const { PostgresTickets } = require(path.join(ROOT, 'dist/lib/store/ticketsPostgres.js'));
const { checkItem } = require(path.join(ROOT, 'dist/lib/guard/check.js'));
const { reportItem, TicketRefused } = require(path.join(ROOT, 'dist/lib/guard/report.js'));

after(async () => {
	await closeRedisClients();
	await closePostgresPools();
});

const uid = () => Math.random().toString(36).slice(2, 10);
const tickets = {
	memory: (scope) => new MemoryTickets(scope),
	redis: (scope) => new RedisTickets(redisClient({ host: '127.0.0.1', port: REDIS_PORT }), scope),
	postgres: (scope) => new PostgresTickets(postgresPool(PG_CONNECTION), scope),
};

/** Each store's own clock, in ms (what its expiry is decided by). */
const storeClock = {
	memory: async () => Date.now(),
	redis: async () => {
		const [s, us] = await redisClient({ host: '127.0.0.1', port: REDIS_PORT }).time();
		return Number(s) * 1000 + Math.floor(Number(us) / 1000);
	},
	postgres: async () => {
		const r = await postgresPool(PG_CONNECTION).query(
			'SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS ms',
		);
		return r.rows[0].ms;
	},
};

for (const kind of ['memory', 'redis', 'postgres']) {
	test(`${kind}: a ticket is claimed once; twice, edited, unknown, another scope's or expired claims nothing`, async () => {
		const scope = `t-${uid()}`;
		const t = tickets[kind](scope);
		await t.put('lease-a', 'text-a', 60_000);
		assert.equal(await t.claim('lease-a', 'text-a'), true, 'the first claim');
		assert.equal(await t.claim('lease-a', 'text-a'), false, 'reported twice');
		await t.put('lease-b', 'text-b', 60_000);
		assert.equal(await t.claim('lease-b', 'text-b-edited'), false, 'an edited ticket');
		assert.equal(await tickets[kind](`other-${scope}`).claim('lease-b', 'text-b'), false, 'scope');
		assert.equal(await t.claim('lease-never', 'x'), false, 'never issued');
		assert.equal(await t.claim('lease-b', 'text-b'), true, 'the untouched ticket still claims');
		// Expiry, on the store's own clock: once it has passed the ticket's time to live (read
		// from the store, not waited out on ours), the ticket claims nothing.
		await t.put('lease-c', 'text-c', 5);
		const putBy = await storeClock[kind]();
		while ((await storeClock[kind]()) <= putBy + 6);
		assert.equal(await t.claim('lease-c', 'text-c'), false, 'expired');
	});

	test(`${kind}: twenty reports racing for one ticket, exactly one claims it`, async () => {
		const scope = `r-${uid()}`;
		await tickets[kind](scope).put('lease', 'text', 60_000);
		const wins = await Promise.all(
			Array.from({ length: 20 }, () => tickets[kind](scope).claim('lease', 'text')),
		);
		assert.equal(wins.filter(Boolean).length, 1);
	});

	test(`${kind}: guard halves, dead provider at threshold 3: three tickets for it, the rest go to the next; a second report counts nothing`, async () => {
		const id = uid();
		const scope = `g-${id}`;
		const p = plan(
			[
				{ name: `dead-${id}`, url: 'http://127.0.0.1:9/dead' },
				{ name: `next-${id}`, url: 'http://127.0.0.1:9/next' },
			],
			{ threshold: 3, open_ms: 600_000, defer_spread_ms: 0 },
			scope,
		);
		const eng = new engine.Engine(p.config);
		const rows = stores[kind](scope);
		const store = () => new FailoverStore(rows, scope, 2000, true, quietLogger);
		const t = () => tickets[kind](scope);
		const names = p.requests.map((r) => r.name);
		const chosen = [];
		let first;
		for (let i = 0; i < 10; i++) {
			const c = await checkItem(eng, store(), t, names, `lease-${id}-${i}`, scope);
			assert.equal(c.decision.kind, 'go');
			chosen.push(c.decision.name);
			const status = c.decision.provider === 0 ? 500 : 200;
			const r = await reportItem(eng, store(), t, names, c.decision.ticket, c.ticketText, scope, {
				kind: 'status',
				status,
			});
			assert.equal(r.attempt.health, status === 500 ? 'failure' : 'success');
			first ??= c;
		}
		assert.deepEqual(chosen, [...Array(3).fill(names[0]), ...Array(7).fill(names[1])]);
		const before = stateOf(await rows.read([names[0]]));
		assert.equal(before.state, 'open');
		await assert.rejects(
			reportItem(eng, store(), t, names, first.decision.ticket, first.ticketText, scope, {
				kind: 'status',
				status: 500,
			}),
			(e) => e instanceof TicketRefused && /already reported/.test(e.message),
		);
		const afterState = stateOf(await rows.read([names[0]]));
		assert.equal(afterState.trips, before.trips, 'the second report counted nothing');
		assert.equal(afterState.recent_failures, before.recent_failures);
		eng.free();
	});
}

test('a ticket store that fails: fail open keeps the ticket in this process (claimed once), fail closed says store unavailable', async () => {
	const { FailoverTickets } = require(path.join(ROOT, 'dist/lib/store/ticketsFailover.js'));
	const { StoreUnavailable } = require(path.join(ROOT, 'dist/lib/store/failover.js'));
	const broken = {
		put: () => Promise.reject(new Error('connection refused')),
		claim: () => Promise.reject(new Error('connection refused')),
	};
	const scope = `f-${uid()}`;
	const open = new FailoverStore(stores.memory(scope), scope, 2000, true, quietLogger);
	await new FailoverTickets(broken, scope, open, 2000).put('lease', 'text', 60_000);
	assert.equal(open.degraded, 'connection refused', 'the item failed open');
	// Another item (its own FailoverStore, the shared store back) reports it: found in memory.
	const later = new FailoverStore(stores.memory(scope), scope, 2000, true, quietLogger);
	const back = { put: async () => undefined, claim: async () => false };
	assert.equal(await new FailoverTickets(back, scope, later, 2000).claim('lease', 'text'), true);
	assert.equal(await new FailoverTickets(back, scope, later, 2000).claim('lease', 'text'), false);
	const closed = new FailoverStore(stores.memory(scope), scope, 2000, false, quietLogger);
	await assert.rejects(
		new FailoverTickets(broken, scope, closed, 2000).put('lease2', 'text', 60_000),
		StoreUnavailable,
	);
	const slow = { put: () => new Promise(() => {}), claim: () => new Promise(() => {}) };
	const timed = new FailoverStore(stores.memory(scope), scope, 50, false, quietLogger);
	await assert.rejects(new FailoverTickets(slow, scope, timed, 50).claim('x', 'y'), /within 50 ms/);
});
