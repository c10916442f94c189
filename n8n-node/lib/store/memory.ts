// In-memory store: shared by every execution in this n8n process, not across queue-mode workers.
import type { RowWrite } from '../engine';
import { publishMemoryEvent } from './memoryEvents';
import { KINDS } from './rowCodec';
import type { Snapshot, StateStore } from './types';

type Rows = Partial<Record<string, { version: number; json: string }>>;

/** The rows of this process, keyed by scope and provider. */
const processRows = new Map<string, Rows>();
const processCounters = new Map<string, Record<string, number>>();

export class MemoryStore implements StateStore {
	constructor(
		private readonly scope: string,
		private readonly rows: Map<string, Rows> = processRows,
	) {}

	private key(provider: string) {
		return `${this.scope}\u0000${provider}`;
	}

	async read(keys: string[]): Promise<Snapshot> {
		const rows: string[] = [];
		for (const k of keys) {
			const stored = this.rows.get(this.key(k));
			for (const kind of KINDS) rows.push(stored?.[kind]?.json ?? '');
		}
		return { now: Date.now(), rows };
	}

	/** A row naming its own `key` (a Fair Share Key's quota row) is kept under it. */
	async write(provider: string, writes: RowWrite[], event?: string | null): Promise<boolean> {
		const at = (w: RowWrite) => this.key(w.key ?? provider);
		const stored = (w: RowWrite) => this.rows.get(at(w))?.[w.kind]?.version ?? 0;
		if (writes.some((w) => stored(w) !== w.expected)) return false;
		for (const w of writes)
			this.rows.set(at(w), {
				...this.rows.get(at(w)),
				[w.kind]: { version: w.version, json: w.json },
			});
		if (event) publishMemoryEvent(this.scope, event); // same synchronous step as the write
		return true;
	}

	async now(): Promise<number> {
		return Date.now();
	}

	async reset(key: string): Promise<void> {
		this.rows.delete(this.key(key));
		processCounters.delete(this.key(key));
	}

	async addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		for (const [provider, d] of Object.entries(deltas)) {
			const c = processCounters.get(this.key(provider)) ?? {};
			for (const [name, v] of Object.entries(d)) c[name] = (c[name] ?? 0) + v;
			processCounters.set(this.key(provider), c);
		}
	}

	async readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		return Object.fromEntries(
			keys.map((k) => [k, { ...(processCounters.get(this.key(k)) ?? {}) }]),
		);
	}
}
