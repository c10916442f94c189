// Guard tickets in the state store: recorded at Check Provider with a time to live, claimed
// atomically at Report Outcome (delete-if-present), so one ticket is reported at most once
// fleet-wide. A ticket is stored as the text Check handed out and claimed only by that exact
// text: a ticket edited on its way, reported twice, expired or never issued here claims nothing.
// Policy-free: what a ticket means is the engine's; this moves and compares its text.

export interface TicketStore {
	/** Record ticket `id` (its text) for `ttlMs`: the engine's `ticket_ttl_ms`, whole and above 0. */
	put(id: string, text: string, ttlMs: number): Promise<void>;
	/** Remove ticket `id` iff it is still recorded with this text; true when this call removed it. */
	claim(id: string, text: string): Promise<boolean>;
}

const processTickets = new Map<string, { text: string; until: number }>();
let swept = 0;

/** This n8n process's tickets (the memory store, and fail-open). */
export class MemoryTickets implements TicketStore {
	constructor(private readonly scope: string) {}

	async put(id: string, text: string, ttlMs: number): Promise<void> {
		const now = Date.now();
		if (now - swept > 1000) {
			// Tickets never reported leave here, at most once a second.
			swept = now;
			for (const [k, t] of processTickets) if (t.until <= now) processTickets.delete(k);
		}
		processTickets.set(`${this.scope}\u0000${id}`, { text, until: now + ttlMs });
	}

	async claim(id: string, text: string): Promise<boolean> {
		const key = `${this.scope}\u0000${id}`;
		const t = processTickets.get(key);
		if (!t || t.until <= Date.now() || t.text !== text) return false;
		processTickets.delete(key); // no await between the read and the delete: atomic here
		return true;
	}
}
