// Transition events from a scope's Redis stream (the compare-and-set script appends them), read
// through a consumer group named for the trigger's workflow: Redis hands each entry to one
// consumer of the group, so the instances of that workflow share the stream and fire once per
// event. A new group starts at the stream's end; an existing one resumes where it stopped, so a
// trigger that was off gets what it missed (as far as the stream's MAXLEN kept it).
import { randomUUID } from 'crypto';
import type { Cluster, Redis } from 'ioredis';
import type { EventSource, OnEvent } from './source';
import { sleep } from 'n8n-workflow';
import { settledBy } from '../timers';

/** An entry delivered to a consumer that died before acknowledging it is taken over after this. */
const CLAIM_IDLE_MS = 30_000;
const BLOCK_MS = 2_000;
/** close() waits at most this for the event being handed to n8n to be acknowledged. */
const CLOSE_WAIT_MS = 2_000;

type Entries = [id: string, fields: string[]][];

export class RedisEventSource implements EventSource {
	private reader: Redis | Cluster | undefined;
	private stopped = false;
	private loop: Promise<void> | undefined;
	/** The event being handed to n8n and acknowledged, while there is one. */
	private delivering: Promise<void> | undefined;
	/** This reader within the group: unique per trigger start (XINFO CONSUMERS lists it). */
	private readonly consumer = `rpc-trigger:${randomUUID()}`;

	constructor(
		private readonly client: Redis | Cluster,
		private readonly stream: string,
		private readonly group: string,
	) {}

	async start(on: OnEvent, onError: (e: Error) => void, fromNow = false): Promise<void> {
		try {
			await this.client.xgroup('CREATE', this.stream, this.group, '$', 'MKSTREAM');
		} catch (e) {
			if (!/BUSYGROUP/.test((e as Error).message)) throw e; // exists: resume where it stopped
			if (fromNow) await this.client.xgroup('SETID', this.stream, this.group, '$');
		}
		// Blocking reads hold their connection: one of its own, not the stores' shared client.
		this.reader = this.client.duplicate();
		this.reader.on('error', () => undefined);
		this.loop = this.run(on, onError);
	}

	private async run(on: OnEvent, onError: (e: Error) => void) {
		let lastClaim = 0;
		while (!this.stopped) {
			try {
				if (Date.now() - lastClaim > CLAIM_IDLE_MS / 2) {
					lastClaim = Date.now();
					const claimed = (await this.reader!.xautoclaim(
						this.stream,
						this.group,
						this.consumer,
						CLAIM_IDLE_MS,
						'0-0',
						'COUNT',
						100,
					)) as [string, Entries];
					await this.deliver(claimed[1], on);
				}
				const res = (await this.reader!.xreadgroup(
					'GROUP',
					this.group,
					this.consumer,
					'COUNT',
					100,
					'BLOCK',
					BLOCK_MS,
					'STREAMS',
					this.stream,
					'>',
				)) as [string, Entries][] | null;
				if (res) await this.deliver(res[0][1], on);
			} catch (e) {
				if (this.stopped) return;
				onError(e as Error);
				await sleep(1_000);
			}
		}
	}

	private async deliver(entries: Entries, on: OnEvent) {
		for (const [id, fields] of entries) {
			// Read as the trigger closed: not handed to n8n, so left pending for the group (taken
			// over after CLAIM_IDLE_MS) rather than emitted by a workflow being deactivated.
			if (this.stopped) return;
			if (!fields) continue; // trimmed away by MAXLEN while pending
			const at = fields.indexOf('event');
			this.delivering = (async () => {
				if (at >= 0) await on(fields[at + 1]);
				await this.reader!.xack(this.stream, this.group, id);
			})();
			try {
				await this.delivering;
			} finally {
				this.delivering = undefined;
			}
		}
	}

	/** An event already handed to n8n is acknowledged before the connection goes (waiting at most
	 * CLOSE_WAIT_MS): unacknowledged, it would stay pending and fire again when taken over. A
	 * blocked read is cut at once: what it had not returned yet stays pending, delivered once. */
	async close(): Promise<void> {
		this.stopped = true;
		const deadline = Date.now() + CLOSE_WAIT_MS;
		await settledBy(this.delivering, deadline);
		this.reader?.disconnect();
		await settledBy(this.loop, deadline);
	}
}
