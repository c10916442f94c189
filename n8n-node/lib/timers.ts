// Time without Node's timer globals, which n8n's community-package scanner forbids: a wait is
// n8n-workflow's `sleep`, a deadline is an `AbortSignal.timeout` (its timer does not hold the
// process open; whatever is being waited on, a socket or a sleep, does). n8n 2's n8n-workflow no
// longer exports `sleepWithAbort`, so the abortable wait is built here on `sleep`.
import { sleep } from 'n8n-workflow';

/** `signal`'s abort as a promise, and the way to stop listening once it no longer matters (an
 * execution's cancel signal outlives many waits; listeners left on it would pile up). */
export function abortOf(signal: AbortSignal): { aborted: Promise<void>; stop: () => void } {
	let stop = () => undefined as void;
	const aborted = new Promise<void>((resolve) => {
		if (signal.aborted) return resolve();
		const on = () => resolve();
		signal.addEventListener('abort', on, { once: true });
		stop = () => signal.removeEventListener('abort', on);
	});
	return { aborted, stop };
}

/** Waits `ms`; if `cancel` aborts first, rejects with `cancelled()` at once (the sleep's own
 * timer then runs out unobserved). */
export async function sleepUnlessAborted(
	ms: number,
	cancel: AbortSignal | undefined,
	cancelled: () => Error,
): Promise<void> {
	if (!cancel) return await sleep(ms);
	if (cancel.aborted) throw cancelled();
	const abort = abortOf(cancel);
	try {
		const won = await Promise.race([sleep(ms).then(() => 'slept'), abort.aborted]);
		if (won !== 'slept') throw cancelled();
	} finally {
		abort.stop();
	}
}

/**
 * The process's one pending timeout for every Watch: a binary heap of due times (on the monotonic
 * clock, performance.now(): a wall-clock step, NTP's or a skewed host's, neither fires a deadline
 * early nor holds it back) and a single
 * AbortSignal.timeout for the earliest. Arming an AbortSignal.timeout and its listener costs tens
 * of microseconds (Node tracks each signal for collection); attempts' deadlines mostly fall after
 * the one already pending, so a new Watch usually costs a heap insert only.
 */
class Deadlines {
	private readonly heap: { due: number; watch: Watch }[] = [];
	/** The pending signal and the due time it was armed for (held: a collected signal never fires). */
	private pending: AbortSignal | undefined;
	private armedFor = Infinity;

	add(due: number, watch: Watch): void {
		const h = this.heap;
		h.push({ due, watch });
		for (let i = h.length - 1; i > 0;) {
			const up = (i - 1) >> 1;
			if (h[up].due <= h[i].due) break;
			[h[up], h[i]] = [h[i], h[up]];
			i = up;
		}
		if (due < this.armedFor) this.arm(due);
	}

	private arm(due: number) {
		const signal = AbortSignal.timeout(Math.max(0, Math.ceil(due - performance.now()))); // past due: at once
		this.pending = signal;
		this.armedFor = due;
		signal.addEventListener('abort', () => this.pending === signal && this.tick(), { once: true });
	}

	private tick() {
		this.pending = undefined;
		this.armedFor = Infinity;
		const now = performance.now();
		while (this.heap.length && this.heap[0].due <= now) this.pop().watch.check();
		if (this.heap.length) this.arm(this.heap[0].due);
	}

	private pop() {
		const h = this.heap;
		const top = h[0];
		const last = h.pop()!;
		if (h.length) {
			h[0] = last;
			for (let i = 0; ;) {
				const l = 2 * i + 1;
				const r = l + 1;
				let m = i;
				if (l < h.length && h[l].due < h[m].due) m = l;
				if (r < h.length && h[r].due < h[m].due) m = r;
				if (m === i) break;
				[h[m], h[i]] = [h[i], h[m]];
				i = m;
			}
		}
		return top;
	}
}

const deadlines = new Deadlines();

/**
 * Calls `fire` once `ms` have passed since it was armed or last restarted, unless stopped first.
 * A restart (a stream's idle timer, pushed back per chunk) only moves the due time: when the
 * earlier due time comes, the Watch is filed again for what is left.
 */
export class Watch {
	private due: number;
	private stopped = false;
	/** It fired; a restart since moves its due time, which `rearm` files again. */
	private fired = false;

	constructor(
		private ms: number,
		private fire: () => void,
	) {
		this.due = performance.now() + ms;
		deadlines.add(this.due, this);
	}

	/** Its filed due time has come: fire, or file again if it was restarted since. */
	check(): void {
		if (this.stopped || this.fired) return;
		if (this.due > performance.now()) return deadlines.add(this.due, this);
		this.fired = true;
		this.fire();
	}

	/** After it fired: if it was restarted since (its due time is ahead again), file it again and
	 * say so; else it stays fired. */
	rearm(): boolean {
		if (this.stopped || !this.fired || this.due <= performance.now()) return false;
		this.fired = false;
		deadlines.add(this.due, this);
		return true;
	}

	/** When it fires (performance.now() ms), unless stopped or restarted. */
	get dueAt(): number {
		return this.due;
	}

	/** The time runs from now again (for `ms`, when given: a stream's idle limit as learned). */
	restart(ms = this.ms): void {
		this.ms = ms;
		if (this.stopped) return;
		const due = performance.now() + ms;
		// Sooner than filed: filed again (the later filing finds it fired, or files what is left).
		if (due < this.due) deadlines.add(due, this);
		this.due = due;
	}

	stop(): void {
		this.stopped = true;
		// Filed until its due time: let go of what firing would have touched meanwhile.
		this.fire = () => undefined;
	}
}

/** Calls `fn` every `ms` until stopped. */
export function every(ms: number, fn: () => void): { stop: () => void } {
	let stopped = false;
	let watch: Watch;
	const tick = () => {
		if (stopped) return;
		fn();
		watch = new Watch(ms, tick);
	};
	watch = new Watch(ms, tick);
	return {
		stop: () => {
			stopped = true;
			watch.stop();
		},
	};
}

/** `operation`, or a rejection once `timeoutMs` pass without its answer. The deadline is the
 * other side's silence, not this process's stall: when the event loop was busy past the deadline
 * (n8n's token estimate, a GC), the timer and the answer's socket data are due in the same turn
 * and timers run first, so the rejection waits one turn, after the loop's I/O. */
export async function withinDeadline<T>(operation: Promise<T>, timeoutMs: number): Promise<T> {
	let watch: Watch | undefined;
	try {
		return await Promise.race([
			operation,
			new Promise<never>((_, reject) => {
				watch = new Watch(timeoutMs, () => {
					void sleep(0).then(() => reject(new Error(`no answer within ${timeoutMs} ms`)));
				});
			}),
		]);
	} finally {
		watch?.stop();
	}
}

/** Waits for `work` to settle, or until `deadline` (epoch ms), whichever comes first. */
export async function settledBy(
	work: Promise<unknown> | undefined,
	deadline: number,
): Promise<void> {
	let watch: Watch | undefined;
	await Promise.race([
		work?.catch(() => undefined),
		new Promise<void>((resolve) => (watch = new Watch(deadline - Date.now(), resolve))),
	]);
	watch?.stop();
}
