// One attempt, whatever it calls (an HTTP request, a chat model's invoke, a streamed answer):
// its abort (the engine's timers and the caller's cancel, lib/attemptAbort.ts), its start time,
// the caller's cancel thrown as Cancelled (nothing is recorded), and the attempt's outcome with
// the ms it took. What a thrown error means is the caller's `failed`, given which timer fired.
import type { Outcome } from './engine';
import { AttemptAbort, Cancelled } from './attemptAbort';

export interface CallResult {
	outcome: Outcome;
	body?: unknown;
	/** The answer's JSON the Answer Check's schema parsed (Call Chain), for `success`. */
	parsed?: unknown;
	ms: number;
}

export type Answer = Omit<CallResult, 'ms'>;

export async function attempt<Why extends string>(
	cancel: AbortSignal | undefined,
	/** The call, under `abort` (arm its timers with `abort.after`); `started` is Date.now(). */
	call: (abort: AttemptAbort<Why>, started: number) => Promise<Answer>,
	/** The outcome of a call that threw `error`; `fired`: the timer that ended it, if one did. */
	failed: (error: unknown, fired: Why | undefined) => Answer,
): Promise<CallResult> {
	const abort = new AttemptAbort<Why>(cancel);
	const started = Date.now();
	try {
		const answer = await call(abort, started);
		return { ...answer, ms: Date.now() - started };
	} catch (error) {
		if (abort.cancelled) throw new Cancelled();
		return { ...failed(error, abort.fired), ms: Date.now() - started };
	} finally {
		abort.dispose();
	}
}
