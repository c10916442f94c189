// Postgres store through n8n's built-in `postgres` credential (pg). One row per
// (scope, provider, kind): the breaker, gate and in-flight rows stay apart so ordinary calls do
// not contend on the breaker row. Compare-and-set is `UPDATE … WHERE version = $n` (or an insert
// for a new row). Time is clock_timestamp(), not now() (frozen at transaction start).
import { STORE_DEFAULTS } from '../engineConstants';
import { Pool } from 'pg';
import type { RowWrite } from '../engine';
import { KINDS } from './rowCodec';
import type { Snapshot, StateStore } from './types';

export interface PostgresOptions {
	host: string;
	port: number;
	database: string;
	user: string;
	password?: string;
	ssl?: 'disable' | 'allow' | 'require';
	allowUnauthorizedCerts?: boolean;
	maxConnections?: number;
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
/** Retention: a new event deletes its scope's events more than this many ids (table-wide) older,
 * so a scope keeps at most this many (README: "Resilient Provider Trigger"). */
export const EVENTS_KEPT = 10_000;
/** The channel every Postgres store NOTIFYs on when it commits a transition event. */
export const EVENTS_CHANNEL = 'resilient_provider_events';
const pools = new Map<string, Pool>();
/** Tables known to exist, per pool: each credential (server, database) needs its own. */
let created = new WeakMap<Pool, Map<string, Promise<void>>>();

export function validTableName(name: string): boolean {
	return IDENT.test(name);
}

/** What a pg client or pool needs to reach the credential's server (also the trigger's listener). */
export function postgresConnection(o: PostgresOptions) {
	return {
		host: o.host,
		port: o.port,
		database: o.database,
		user: o.user,
		password: o.password || undefined,
		ssl:
			o.ssl && o.ssl !== 'disable' ? { rejectUnauthorized: !o.allowUnauthorizedCerts } : undefined,
	};
}

export function postgresPool(o: PostgresOptions): Pool {
	const id = JSON.stringify([
		o.host,
		o.port,
		o.database,
		o.user,
		o.password ?? '',
		o.ssl ?? 'disable',
	]);
	let p = pools.get(id);
	if (p) return p;
	p = new Pool({
		...postgresConnection(o),
		max: Math.min(o.maxConnections ?? 10, 10),
		// Connecting may take as long as one store operation.
		connectionTimeoutMillis: STORE_DEFAULTS.operationTimeoutMs,
		idleTimeoutMillis: 30_000,
	});
	p.on('error', () => undefined); // idle-client errors surface on the next query instead
	pools.set(id, p);
	return p;
}

export async function closePostgresPools(): Promise<void> {
	await Promise.all([...pools.values()].map((p) => p.end().catch(() => undefined)));
	pools.clear();
	created = new WeakMap();
}

/** Transition events and which trigger consumer claimed which: `<table>_events` (one row per
 * committed transition), `<table>_event_consumers` (where a consumer started reading a scope),
 * `<table>_event_claims` (one row per event a consumer took; the primary key makes it once). */
export async function ensureEventTables(db: Pick<Pool, 'query'>, table: string): Promise<void> {
	// Workers start together: CREATE … IF NOT EXISTS can still collide in the catalog (23505) or
	// find the relation made meanwhile (42P07); either way it exists now.
	const create = (sql: string) =>
		db.query(sql).catch((e: { code?: string }) => {
			if (e.code !== '23505' && e.code !== '42P07') throw e;
		});
	await create(`CREATE TABLE IF NOT EXISTS ${table}_events (
      id bigserial PRIMARY KEY, scope text NOT NULL, event text NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp())`);
	await create(`CREATE INDEX IF NOT EXISTS ${table}_events_scope ON ${table}_events (scope, id)`);
	await create(`CREATE TABLE IF NOT EXISTS ${table}_event_consumers (
      consumer text NOT NULL, scope text NOT NULL, since_id bigint NOT NULL,
      PRIMARY KEY (consumer, scope))`);
	await create(`CREATE TABLE IF NOT EXISTS ${table}_event_claims (
      consumer text NOT NULL, event_id bigint NOT NULL REFERENCES ${table}_events (id) ON DELETE CASCADE,
      PRIMARY KEY (consumer, event_id))`);
}

export class PostgresStore implements StateStore {
	private offset = 0;
	constructor(
		private readonly pool: Pool,
		private readonly scope: string,
		private readonly table: string = STORE_DEFAULTS.tableName,
	) {
		if (!validTableName(table))
			throw new Error(`table name "${table.slice(0, 80)}" must match ${IDENT}`);
	}

	/** The tables, made once per pool: the first items of a fresh install arrive together, and
	 * concurrent CREATE … IF NOT EXISTS can still collide in the catalog (23505, 42P07). */
	private ensureTable(): Promise<void> {
		let tables = created.get(this.pool);
		if (!tables) created.set(this.pool, (tables = new Map()));
		let made = tables.get(this.table);
		if (!made) {
			made = this.createTables().catch((e) => {
				tables.delete(this.table); // the next item tries again
				throw e;
			});
			tables.set(this.table, made);
		}
		return made;
	}

	private async createTables(): Promise<void> {
		const create = (sql: string) =>
			this.pool.query(sql).catch((e: { code?: string }) => {
				if (e.code !== '23505' && e.code !== '42P07') throw e;
			});
		await create(`CREATE TABLE IF NOT EXISTS ${this.table} (
      scope text NOT NULL, provider text NOT NULL, kind text NOT NULL,
      version bigint NOT NULL, data jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (scope, provider, kind))`);
		await create(`CREATE TABLE IF NOT EXISTS ${this.table}_counters (
      scope text NOT NULL, provider text NOT NULL, name text NOT NULL, value bigint NOT NULL,
      PRIMARY KEY (scope, provider, name))`);
		await ensureEventTables(this.pool, this.table);
	}

	async read(keys: string[]): Promise<Snapshot> {
		await this.ensureTable();
		// data::text: the engine reads the row text as stored (its version is inside).
		const res = await this.pool.query(
			`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now, s.provider, s.kind, s.data::text AS data
         FROM (SELECT 1) one LEFT JOIN ${this.table} s ON s.scope = $1 AND s.provider = ANY($2::text[])`,
			[this.scope, keys],
		);
		const now = Math.floor(Number(res.rows[0].now));
		this.offset = now - Date.now();
		const rows = new Array<string>(keys.length * KINDS.length).fill('');
		const at = new Map(keys.map((k, i) => [k, i * KINDS.length]));
		for (const r of res.rows) {
			const kind = (KINDS as readonly string[]).indexOf(r.kind);
			if (r.provider !== null && kind >= 0) rows[at.get(r.provider)! + kind] = r.data;
		}
		return { now, rows };
	}

	async write(provider: string, writes: RowWrite[], event?: string | null): Promise<boolean> {
		await this.ensureTable();
		// One row (the common case: a breaker, gate or lease change) is one statement, atomic on
		// its own: no transaction, no client checked out of the pool. A transition (rare) takes the
		// transaction below, so its event row and NOTIFY commit with its rows or not at all.
		if (writes.length === 1 && !event)
			return (await this.writeRow(this.pool, provider, writes[0])) === 1;
		const client = await this.pool.connect();
		try {
			await client.query('BEGIN');
			for (const row of writes) {
				if ((await this.writeRow(client, provider, row)) !== 1) {
					await client.query('ROLLBACK');
					return false;
				}
			}
			if (event) await this.appendEvent(client, event);
			await client.query('COMMIT');
			return true;
		} catch (e) {
			await client.query('ROLLBACK').catch(() => undefined);
			throw e;
		} finally {
			client.release();
		}
	}

	/** Inside the write's transaction: the event row, the scope's retention, and a NOTIFY that
	 * Postgres delivers at COMMIT (never for a rolled-back transition). */
	private async appendEvent(db: Pick<Pool, 'query'>, event: string): Promise<void> {
		const events = `${this.table}_events`;
		await db.query(
			`WITH added AS (INSERT INTO ${events} (scope, event) VALUES ($1, $2) RETURNING id)
       DELETE FROM ${events} WHERE scope = $1 AND id <= (SELECT id - ${EVENTS_KEPT} FROM added)`,
			[this.scope, event],
		);
		await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, this.table]);
	}

	/** Compare-and-set of one row: the rows it changed (1, or 0 when the version moved on). */
	private async writeRow(
		db: Pick<Pool, 'query'>,
		provider: string,
		{ kind, expected, version, json, key }: RowWrite,
	): Promise<number> {
		provider = key ?? provider; // a row naming its own key: a Fair Share Key's quota row
		const res =
			expected === 0
				? await db.query(
						`INSERT INTO ${this.table} (scope, provider, kind, version, data) VALUES ($1, $2, $3, $4, $5::jsonb)
              ON CONFLICT (scope, provider, kind) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data, updated_at = clock_timestamp()
              WHERE ${this.table}.version = 0`,
						[this.scope, provider, kind, version, json],
					)
				: await db.query(
						`UPDATE ${this.table} SET version = $4, data = $5::jsonb, updated_at = clock_timestamp()
              WHERE scope = $1 AND provider = $2 AND kind = $3 AND version = $6`,
						[this.scope, provider, kind, version, json, expected],
					);
		return res.rowCount ?? 0;
	}

	async now(): Promise<number> {
		return Date.now() + this.offset;
	}

	async reset(key: string): Promise<void> {
		await this.ensureTable();
		await this.pool.query(`DELETE FROM ${this.table} WHERE scope = $1 AND provider = $2`, [
			this.scope,
			key,
		]);
		await this.pool.query(`DELETE FROM ${this.table}_counters WHERE scope = $1 AND provider = $2`, [
			this.scope,
			key,
		]);
	}

	async addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		const rows = Object.entries(deltas).flatMap(([p, d]) =>
			Object.entries(d)
				.filter(([, v]) => v)
				.map(([n, v]) => [p, n, v] as const),
		);
		if (!rows.length) return;
		await this.ensureTable();
		await this.pool.query(
			`INSERT INTO ${this.table}_counters (scope, provider, name, value)
         SELECT $1, p, n, v FROM unnest($2::text[], $3::text[], $4::bigint[]) AS t(p, n, v)
       ON CONFLICT (scope, provider, name) DO UPDATE SET value = ${this.table}_counters.value + EXCLUDED.value`,
			[this.scope, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
		);
	}

	async readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		await this.ensureTable();
		const res = await this.pool.query(
			`SELECT provider, name, value FROM ${this.table}_counters WHERE scope = $1 AND provider = ANY($2::text[])`,
			[this.scope, keys],
		);
		const out: Record<string, Record<string, number>> = Object.fromEntries(
			keys.map((k) => [k, {}]),
		);
		for (const r of res.rows) out[r.provider][r.name] = Number(r.value);
		return out;
	}
}
