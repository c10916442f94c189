// Guard tickets on Postgres (see tickets.ts): loaded only when the Postgres store is chosen.
import { STORE_DEFAULTS } from '../engineConstants';
import type { Pool } from 'pg';
import type { TicketStore } from './tickets';

const ticketTables = new WeakMap<Pool, Set<string>>();

/** Postgres: a row per ticket with its expiry; the claim is one DELETE … RETURNING. */
export class PostgresTickets implements TicketStore {
	private readonly table: string;
	constructor(
		private readonly pool: Pool,
		private readonly scope: string,
		stateTable: string = STORE_DEFAULTS.tableName,
	) {
		this.table = `${stateTable}_tickets`; // the state table's name is validated by its store
	}

	private async ensureTable(): Promise<void> {
		let tables = ticketTables.get(this.pool);
		if (!tables) ticketTables.set(this.pool, (tables = new Set()));
		if (tables.has(this.table)) return;
		await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
      scope text NOT NULL, id text NOT NULL, ticket text NOT NULL, expires_at timestamptz NOT NULL,
      PRIMARY KEY (scope, id))`);
		tables.add(this.table);
	}

	async put(id: string, text: string, ttlMs: number): Promise<void> {
		await this.ensureTable();
		// Expired tickets of this scope leave with the next one recorded (no sweeper process).
		await this.pool.query(
			`WITH gone AS (DELETE FROM ${this.table} WHERE scope = $1 AND expires_at < clock_timestamp())
       INSERT INTO ${this.table} (scope, id, ticket, expires_at)
       VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')`,
			[this.scope, id, text, ttlMs],
		);
	}

	async claim(id: string, text: string): Promise<boolean> {
		await this.ensureTable();
		const res = await this.pool.query(
			`DELETE FROM ${this.table}
        WHERE scope = $1 AND id = $2 AND ticket = $3 AND expires_at >= clock_timestamp()`,
			[this.scope, id, text],
		);
		return (res.rowCount ?? 0) === 1;
	}
}
