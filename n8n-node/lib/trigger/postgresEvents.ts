// Transition events from `<table>_events` (the store's write transaction inserts them and
// NOTIFYs). A consumer (the trigger's workflow) claims an event by inserting (consumer, event)
// into `<table>_event_claims`: the primary key lets one instance of that workflow have it, the
// others' inserts do nothing, so the workflow fires once per event. Claims are per event, not a
// cursor, so a transaction that commits late (a lower id seen after a higher one) is not skipped.
// A consumer's first start records where it begins; later starts deliver what was missed.
import { Client, type Pool } from 'pg';
import { EVENTS_CHANNEL, ensureEventTables } from '../store/postgres';
import type { EventSource, OnEvent } from './source';
import { every, settledBy } from '../timers';

/** Polled this often as well as on NOTIFY: a notification sent while the listener reconnected
 * is not lost, only later. */
const POLL_MS = 5_000;
/** close() waits at most this for the claim round in progress to hand its events to n8n. */
const CLOSE_WAIT_MS = 2_000;

export class PostgresEventSource implements EventSource {
	private listener: Client | undefined;
	private timer: { stop: () => void } | undefined;
	private stopped = false;
	private running: Promise<void> = Promise.resolve();
	private again = false;

	constructor(
		private readonly pool: Pool,
		private readonly listenerConfig: ConstructorParameters<typeof Client>[0],
		private readonly table: string,
		private readonly scope: string,
		private readonly consumer: string,
	) {}

	async start(on: OnEvent, onError: (e: Error) => void, fromNow = false): Promise<void> {
		await ensureEventTables(this.pool, this.table);
		await this.pool.query(
			`INSERT INTO ${this.table}_event_consumers (consumer, scope, since_id)
         SELECT $1, $2, coalesce(max(id), 0) FROM ${this.table}_events WHERE scope = $2
       ON CONFLICT (consumer, scope) DO ${fromNow ? 'UPDATE SET since_id = EXCLUDED.since_id' : 'NOTHING'}`,
			[this.consumer, this.scope],
		);
		const poll = () => this.poll(on).catch((e) => this.stopped || onError(e as Error));
		await this.listen(poll, onError);
		this.timer = every(POLL_MS, poll);
		await poll();
	}

	private async listen(poll: () => void, onError: (e: Error) => void) {
		const client = new Client(this.listenerConfig);
		client.on('error', (e) => {
			if (this.stopped) return;
			onError(e);
			this.listener = undefined; // the 5 s poll carries on without notifications
		});
		client.on('notification', (n) => {
			if (n.payload === this.table) poll();
		});
		await client.connect();
		await client.query(`LISTEN ${EVENTS_CHANNEL}`);
		this.listener = client;
	}

	/** One claim round at a time; a NOTIFY during a round asks for one more. */
	private poll(on: OnEvent): Promise<void> {
		if (this.again) return this.running;
		this.again = true;
		this.running = this.running
			.catch(() => undefined)
			.then(async () => {
				this.again = false;
				if (this.stopped) return;
				const res = await this.pool.query(
					`WITH claimed AS (
           INSERT INTO ${this.table}_event_claims (consumer, event_id)
           SELECT $1, e.id FROM ${this.table}_events e
             JOIN ${this.table}_event_consumers c ON c.consumer = $1 AND c.scope = $2
            WHERE e.scope = $2 AND e.id > c.since_id
              AND NOT EXISTS (SELECT 1 FROM ${this.table}_event_claims k WHERE k.consumer = $1 AND k.event_id = e.id)
           ON CONFLICT DO NOTHING RETURNING event_id)
         SELECT e.event FROM ${this.table}_events e JOIN claimed ON claimed.event_id = e.id ORDER BY e.id`,
					[this.consumer, this.scope],
				);
				for (const r of res.rows) await on(String(r.event));
			});
		return this.running;
	}

	/** No new claim round starts; the one in progress still hands over what it claimed (a claim is
	 * the delivery record: a claimed event not handed over would be lost, and none is claimed
	 * twice, so nothing fires again). Waits for it at most CLOSE_WAIT_MS. */
	async close(): Promise<void> {
		this.stopped = true;
		this.timer?.stop();
		await this.listener?.end().catch(() => undefined);
		await settledBy(this.running, Date.now() + CLOSE_WAIT_MS);
	}
}
